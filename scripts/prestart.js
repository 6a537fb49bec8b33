#!/usr/bin/env node
// `npm start`'s first step: builds dist/ (scripts/build.js), unless an API started from this
// checkout still serves the data folder (its api.pid names a live process): a build would rewrite
// dist/ under it, and the modules it loads later would not be those it started with. The start
// would be refused by the same lock anyway; this refuses it before anything is rewritten.
const { readFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { spawnSync } = require('node:child_process');

const dataDir = resolve(process.env.DATA_DIR && process.env.DATA_DIR.trim() ? process.env.DATA_DIR.trim() : './data');
const lock = join(dataDir, 'api.pid');

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

let holder = NaN;
try {
  holder = Number.parseInt(readFileSync(lock, 'utf8'), 10);
} catch {
  // no lock: no API serves the folder
}
if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
  process.stderr.write(
    `another API process (pid ${holder}) serves ${dataDir}: stop it first (dist/ is not rebuilt under a running process; another data folder: DATA_DIR)\n`,
  );
  process.exit(1);
}
const built = spawnSync(process.execPath, [join(__dirname, 'build.js')], { stdio: 'inherit' });
process.exit(built.status ?? 1);
