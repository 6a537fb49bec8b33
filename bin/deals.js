#!/usr/bin/env node
// The operator's CLI (`npm run cli -- <command>`, or `deals` once installed with `npm install -g`):
// runs the build in dist/ and never builds it (`npm run build`, or `npm start`, does); says so when
// there is none or a source is newer; answers `--help` from the texts written after the build.
const { basename, join, relative } = require('node:path');
const { buildPaths, buildState, cachedHelp } = require('./cli-build');

const root = join(__dirname, '..');
const args = process.argv.slice(2);
const build = buildState(root);
if (build.state === 'missing') {
  process.stderr.write('error: the CLI is not built yet: run `npm run build` (npm start builds it too)\n');
  process.exit(1);
}
if (build.state === 'stale')
  process.stderr.write(`warning: ${build.newer} is newer than the build in dist/: this runs the last build (npm run build makes a new one)\n`);
// As the CLI names itself in its usage lines (apps/cli/src/cli.module.ts, programName).
const script = process.argv[1];
const programName =
  process.env.npm_lifecycle_event === 'cli' ? 'npm run cli --' : basename(script) === 'deals' ? 'deals' : `node ${relative(process.cwd(), script) || script}`;
const help = cachedHelp(root, build.builtAt, args, programName);
if (help !== null) {
  process.stdout.write(help);
  process.exit(0);
}
require(buildPaths(root).main);
