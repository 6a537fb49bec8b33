// What the operator's CLI knows of its build in dist/ before loading it: whether there is one,
// whether a source is newer than it, and the help texts written after it (so that `--help` answers
// without starting the service's modules).
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');

const SOURCE_FOLDERS = ['apps', 'libs'];
const SOURCE_ENDINGS = ['.ts', '.hbs', '.css'];

/** The build's paths under `root`. */
function buildPaths(root) {
  return {
    main: join(root, 'dist', 'apps', 'cli', 'src', 'main.js'),
    buildInfo: join(root, 'dist', '.tsbuildinfo'),
    help: join(root, 'dist', 'apps', 'cli', 'help.json'),
  };
}

function mtimeOf(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/** The newest source file under `root` (apps/, libs/, the tsconfigs): its path and time, or null. */
function newestSource(root) {
  let newest = null;
  const visit = (path) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) visit(child);
      else if (SOURCE_ENDINGS.some((ending) => entry.name.endsWith(ending))) {
        const time = mtimeOf(child);
        if (time !== null && (newest === null || time > newest.time)) newest = { path: child, time };
      }
    }
  };
  for (const folder of SOURCE_FOLDERS) if (mtimeOf(join(root, folder)) !== null) visit(join(root, folder));
  for (const config of ['tsconfig.json', 'tsconfig.build.json']) {
    const time = mtimeOf(join(root, config));
    if (time !== null && (newest === null || time > newest.time)) newest = { path: join(root, config), time };
  }
  return newest;
}

/**
 * `missing`: no build; `stale` (with the newer source): a source changed since the build;
 * `fresh` otherwise. `builtAt` identifies the build (its build info's time).
 */
function buildState(root) {
  const paths = buildPaths(root);
  const builtAt = mtimeOf(paths.buildInfo);
  if (builtAt === null || mtimeOf(paths.main) === null) return { state: 'missing', builtAt: null };
  const newest = newestSource(root);
  return newest !== null && newest.time > builtAt ? { state: 'stale', builtAt, newer: newest.path } : { state: 'fresh', builtAt };
}

/**
 * The help text `args` ask for (`--help`, or `<command> --help`) as written after build `builtAt`,
 * naming the program `programName`; null when none was written for that build.
 */
function cachedHelp(root, builtAt, args, programName) {
  const asked = args.length === 1 && isHelp(args[0]) ? '' : args.length === 2 && isHelp(args[1]) ? args[0] : null;
  if (asked === null) return null;
  try {
    const help = JSON.parse(readFileSync(buildPaths(root).help, 'utf8'));
    if (help.builtAt !== builtAt) return null;
    const text = asked === '' ? help.root : help.commands[asked];
    return typeof text === 'string' ? text.split(help.mark).join(programName) : null;
  } catch {
    return null;
  }
}

function isHelp(arg) {
  return arg === '--help' || arg === '-h';
}

module.exports = { buildPaths, buildState, cachedHelp, mtimeOf };
