/** Jest's global teardown: the run's temporary folder in memory (run-environment.setup.js) removed with what is left in it. */
const { rmSync } = require('node:fs');

module.exports = async function removeRunEnvironment() {
  const dir = process.env.DEALS_TESTS_TMPDIR;
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
};
