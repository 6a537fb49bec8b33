/**
 * The API description against client generators other than the project's own (`npm run
 * test:generators`): each is installed from the npm registry into a temporary folder, generates a
 * client from openapi.json, and the client is compiled under `tsc --strict`.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/generators'],
  testRegex: '\\.generators-spec\\.ts$',
  testPathIgnorePatterns: ['/node_modules/'],
  maxWorkers: 1,
};
