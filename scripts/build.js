#!/usr/bin/env node
// `npm run build`: compiles apps, libs and bench into dist/ (tsconfig.build.json), then rewrites
// the @deals/* imports of the output into relative paths (tsc-alias), and does neither for a tree
// that has not changed since the last build:
// - `tsc -b` compiles only when an input or a tsconfig is newer than dist/.tsbuildinfo (or the
//   last build had errors), and then only the files affected;
// - tsc-alias runs when dist/.tsbuildinfo is not the one it last ran after (dist/.aliased holds
//   that file's mtime, written once tsc-alias has finished), so an interrupted rewrite is redone.
// Exits with the failing step's status.
const { spawnSync } = require('node:child_process');
const { readFileSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

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
