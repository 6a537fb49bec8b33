/**
 * The fault suite (`npm run test:faults`): the distributed mode under a private PostgreSQL and Redis
 * that it stops, crashes, slows and cuts off under load. One suite at a time, alone on the machine:
 * it times how callers are answered.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testRegex: '\\.faults-spec\\.ts$',
  testPathIgnorePatterns: ['/node_modules/'],
  maxWorkers: 1,
};
