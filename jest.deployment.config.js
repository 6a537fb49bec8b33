/**
 * The deployment suites (`npm run test:deployment`): the compose files brought up for real on a
 * Docker engine the global setup starts (and the teardown stops); skipped, saying why, where none can.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/deployment'],
  testRegex: '\\.deploy-spec\\.ts$',
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: '<rootDir>/test/deployment/global-setup.ts',
  globalTeardown: '<rootDir>/test/deployment/global-teardown.ts',
  maxWorkers: 1,
};
