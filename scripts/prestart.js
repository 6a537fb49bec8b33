#!/usr/bin/env node
// `npm start`'s first step: builds dist/ (scripts/build.js), unless an API started from this
// checkout still serves the data folder (its api.pid names a live process): a build would rewrite
// dist/ under it, and the modules it loads later would not be those it started with. The start
// would be refused by the same lock anyway; this refuses it before anything is rewritten.
const { readFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { spawnSync } = require('node:child_process');

/** Whether `pid` is a live process that may be this service's API (on Linux: its command line names the API's entry). */
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (error.code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('apps/api/src/main');
  } catch {
    return true; // no /proc to ask: taken as the API, as the lock itself does
  }
}

/** The pid of the API serving `dataDir` (its api.pid names a live API process), or null. */
function apiServing(dataDir) {
  let holder = NaN;
  try {
    holder = Number.parseInt(readFileSync(join(dataDir, 'api.pid'), 'utf8'), 10);
  } catch {
    // no lock: no API serves the folder
  }
  return Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && alive(holder) ? holder : null;
}

function main() {
  const dataDir = resolve(process.env.DATA_DIR && process.env.DATA_DIR.trim() ? process.env.DATA_DIR.trim() : './data');
  const holder = apiServing(dataDir);
  if (holder !== null) {
    process.stderr.write(
      `another API process (pid ${holder}) serves ${dataDir}: stop it first (dist/ is not rebuilt under a running process; another data folder: DATA_DIR; remove ${join(dataDir, 'api.pid')} if that process is not this service)\n`,
    );
    process.exit(1);
  }
  const built = spawnSync(process.execPath, [join(__dirname, 'build.js')], { stdio: 'inherit' });
  process.exit(built.status ?? 1);
}

if (require.main === module) main();
module.exports = { apiServing };
