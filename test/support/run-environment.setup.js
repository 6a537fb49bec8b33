/**
 * Jest's global setup: what every worker and every process a test starts inherits.
 *
 * The run's temporary folders (every `os.tmpdir()`) go to one folder in memory (/dev/shm) when
 * the machine has one, so that the stores' fsyncs cost nothing. A test kills processes, never the
 * machine: what a killed process wrote is in the page cache either way, so no test's guarantee rests
 * on the disk (PostgreSQL's own test clusters run with fsync off for the same reason). `TESTS_TMPDIR`
 * chooses the folder's parent.
 */
const { accessSync, chmodSync, constants, mkdtempSync } = require('node:fs');
const { join } = require('node:path');

module.exports = async function runEnvironment() {
  const parent = process.env.TESTS_TMPDIR ?? '/dev/shm';
  try {
    accessSync(parent, constants.W_OK);
  } catch {
    return; // no memory folder here: the OS default stays
  }
  const dir = mkdtempSync(join(parent, 'deals-tests-'));
  // As /tmp: others (the postgres user of a test's own cluster) make their folders in it.
  chmodSync(dir, 0o1777);
  process.env.DEALS_TESTS_TMPDIR = dir;
  process.env.TMPDIR = dir;
};
