/**
 * Jest's order of the suites (the slowest and the last failed first), except that of the suites
 * that take turns on the machine's PostgreSQL (`exclusive('postgres-processes')`, the ones under
 * test/e2e/distributed/) only the first keeps its place and the others run last: started together,
 * one would hold a jest worker idle while it waits for the other to finish.
 */
const Sequencer = require('@jest/test-sequencer').default;

const TAKING_TURNS = /[\\/]test[\\/]e2e[\\/]distributed[\\/]/;

class SuiteOrder extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const first = sorted.findIndex((test) => TAKING_TURNS.test(test.path));
    if (first < 0) return sorted;
    const later = sorted.filter((test, i) => i > first && TAKING_TURNS.test(test.path));
    return [...sorted.filter((test) => !later.includes(test)), ...later];
  }
}

module.exports = SuiteOrder;
