/**
 * The suites that assert how fast the service answers (`*.alone.e2e-spec.ts`), run by `npm test`
 * after all the others and one at a time: what they time is the service and its CLI, not the
 * suites a second jest worker would run beside them on the same CPUs.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testRegex: '\\.alone\\.e2e-spec\\.ts$',
  testPathIgnorePatterns: ['/node_modules/'],
  maxWorkers: 1,
};
