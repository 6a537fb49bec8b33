#!/usr/bin/env node
// `npm test`: the main tier (jest.config.js, 2 workers), then the suites that time the service,
// alone (jest.alone.config.js). Arguments after `npm test --` go to both runs (a path runs that
// path in whichever tier holds it; `--listTests` lists the suites of both without running them).
// The second run starts only when the first passed; the exit status is the failing run's.
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const jest = require.resolve('jest/bin/jest', { paths: [join(__dirname, '..')] });
const args = process.argv.slice(2);
// A path or pattern that names no suite of a tier is no failure of that tier.
const extra = args.some((arg) => !arg.startsWith('-')) ? ['--passWithNoTests'] : [];
for (const config of [[], ['--config', 'jest.alone.config.js']]) {
  const run = spawnSync(process.execPath, [jest, ...config, ...extra, ...args], { cwd: join(__dirname, '..'), stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
