/** Unit, API, contract and end-to-end tests (`npm test`); the suites that time the service run after them, alone (jest.alone.config.js). */
const { readFileSync } = require('node:fs');
const swc = JSON.parse(readFileSync(`${__dirname}/.swcrc`, 'utf8'));
delete swc.$schema;
const ESM_ONLY = '/node_modules/(@scure|@noble)/';

module.exports = {
  // Node's, failing a suite that leaves a server, process or timer open after its teardown.
  testEnvironment: '<rootDir>/test/support/leak-checking-environment.js',
  rootDir: __dirname,
  roots: ['<rootDir>/libs', '<rootDir>/apps', '<rootDir>/test'],
  testRegex: '\\.(spec|int-spec|e2e-spec|api-spec)\\.ts$',
  // Suites that time the service run afterwards, on their own (jest.alone.config.js).
  testPathIgnorePatterns: ['/node_modules/', '\\.alone\\.e2e-spec\\.ts$'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc], [`${ESM_ONLY}.+\\.js$`]: ['@swc/jest', swc] },
  // ESM-only packages (otplib's base32 and hashes): Node 20.19 requires them as they are, Jest only compiled to CommonJS.
  transformIgnorePatterns: [`^(?!.*${ESM_ONLY}).*/node_modules/`],
  moduleNameMapper: { '^@deals/([a-z-]+)$': '<rootDir>/libs/$1/src', '^@deals/([a-z-]+)/(.*)$': '<rootDir>/libs/$1/src/$2' },
  // A test's ceiling says it hung, never that the machine was slow: tests await what they check, and
  // a shared machine at several times its cores' load takes minutes for what takes seconds alone.
  testTimeout: 180_000,
  // Beside jest's summary: which suites were skipped, with the reason their titles give.
  reporters: ['default', '<rootDir>/test/support/skipped-suites-reporter.js'],
  // V8's code cache of every module kept across a worker's suites (each suite loads the same ones afresh).
  runtime: '<rootDir>/test/support/code-cached-runtime.js',
  // Temporary folders in memory (/dev/shm): the stores' fsyncs are the run's largest wait otherwise.
  globalSetup: '<rootDir>/test/support/run-environment.setup.js',
  globalTeardown: '<rootDir>/test/support/run-environment.teardown.js',
  maxWorkers: 2,
};
