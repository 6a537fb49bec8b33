#!/usr/bin/env node
// `npm run build`: compiles apps, libs and bench into dist/ (tsconfig.build.json), then rewrites
// the @deals/* imports of the output into relative paths (tsc-alias), and does neither for a tree
// that has not changed since the last build:
// - `tsc -b` compiles only when an input or a tsconfig is newer than dist/.tsbuildinfo (or the
//   last build had errors), and then only the files affected;
// - tsc-alias runs when dist/.tsbuildinfo is not the one it last ran after (dist/.aliased holds
//   that file's mtime, written once tsc-alias has finished), so an interrupted rewrite is redone.
// - the files the compiled code reads beside itself (the partner site's templates and stylesheet:
//   libs/*/src/**/*.{hbs,css}) are copied to the same place under dist/ when newer.
// Exits with the failing step's status.
const { spawnSync } = require('node:child_process');
const { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join, relative } = require('node:path');

const root = join(__dirname, '..');
const project = join(root, 'tsconfig.build.json');
const buildInfo = join(root, 'dist', '.tsbuildinfo');
const aliased = join(root, 'dist', '.aliased');

function run(script, args) {
  const result = spawnSync(process.execPath, [require.resolve(script, { paths: [root] }), ...args], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function mtimeOf(file) {
  try {
    return String(statSync(file).mtimeMs);
  } catch {
    return null;
  }
}

function textOf(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

run('typescript/bin/tsc', ['-b', project]);
const built = mtimeOf(buildInfo);
if (built === null || textOf(aliased) !== built) {
  run('tsc-alias/dist/bin/index.js', ['-p', project]);
  writeFileSync(aliased, built ?? '');
}

/** Every file of `dir` (recursively) whose name ends with one of `extensions`. */
function filesUnder(dir, extensions) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, extensions);
    return extensions.some((ext) => entry.name.endsWith(ext)) ? [path] : [];
  });
}

for (const source of filesUnder(join(root, 'libs'), ['.hbs', '.css'])) {
  const target = join(root, 'dist', relative(root, source));
  if (mtimeOf(target) !== null && Number(mtimeOf(target)) >= Number(mtimeOf(source))) continue;
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(source, target);
}

// The CLI's help texts, written after a build that changed something (bin/deals.js answers
// `--help` from them without starting the service), on a throwaway data folder and the embedded mode.
const helpFile = join(root, 'dist', 'apps', 'cli', 'help.json');
const builtAt = statSync(buildInfo).mtimeMs;
let helpBuiltAt = null;
try {
  helpBuiltAt = JSON.parse(readFileSync(helpFile, 'utf8')).builtAt;
} catch {
  // not written yet
}
if (helpBuiltAt !== builtAt) {
  const dataDir = mkdtempSync(join(tmpdir(), 'deals-cli-help-'));
  try {
    const written = spawnSync(process.execPath, [join(root, 'dist', 'apps', 'cli', 'src', 'main.js')], {
      cwd: root,
      stdio: 'inherit',
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEALS_CLI_WRITE_HELP: String(builtAt) },
    });
    if (written.status !== 0) process.exit(written.status ?? 1);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
