import { deciderSpec } from '@deals/testing';
import { NotFound, ValidationFailed } from '../errors';
import { nextDueJob, TestClockEvent, testClockDecider, TestClockMoved } from './test-clock';

const given = deciderSpec(testClockDecider);
const NOW = new Date('2026-06-15T12:00:00Z');
const created: TestClockEvent = {
  type: 'TestClockCreated',
  data: { clockId: 'c1', partnerId: 'p_test', name: null, frozenTime: '2027-01-01T00:00:00.000Z', createdAt: NOW.toISOString() },
};
const armed = (id: string, runAt: string, seq: number): TestClockEvent => ({
  type: 'TestClockJobArmed',
  data: { clockId: 'c1', seq, job: { id, kind: 'release-hold', runAt, data: {} } },
});
const advancing = (to: string): TestClockEvent => ({
  type: 'TestClockAdvancing',
  data: { clockId: 'c1', from: '2027-01-01T00:00:00.000Z', to },
});
const fold = (events: TestClockEvent[]) => events.reduce(testClockDecider.evolve, testClockDecider.initialState());

describe('test clock decider', () => {
  it('advances only forward, at most two years at once, and not while advancing', () => {
    const advance = (to: string) => ({ type: 'AdvanceTestClock' as const, data: { clockId: 'c1', to } });
    given([created])
      .when(advance('2027-01-02T00:00:00Z'), NOW)
      .then([advancing('2027-01-02T00:00:00.000Z')]);
    given([created]).when(advance('2026-12-31T00:00:00Z'), NOW).thenThrows(ValidationFailed);
    given([created]).when(advance('2029-06-01T00:00:00Z'), NOW).thenThrows(ValidationFailed);
    given([created, advancing('2027-01-02T00:00:00.000Z')])
      .when(advance('2027-01-03T00:00:00Z'), NOW)
      .thenThrows(ValidationFailed, { message: 'status is advancing: wait until it is ready' });
    given([]).when(advance('2027-01-03T00:00:00Z'), NOW).thenThrows(NotFound);
  });

  it('runs the jobs due by the advance’s end in order of their due times, then is ready at the end', () => {
    const history = [
      created,
      armed('b', '2027-01-01T10:00:00.000Z', 1),
      armed('a', '2027-01-01T09:00:00.000Z', 2),
      armed('later', '2027-02-01T00:00:00.000Z', 3),
      advancing('2027-01-02T00:00:00.000Z'),
    ];
    expect(nextDueJob(fold(history))?.id).toBe('a');
    const ranA: TestClockEvent = { type: 'TestClockJobRan', data: { clockId: 'c1', jobId: 'a', seq: 2, at: '2027-01-01T09:00:00.000Z' } };
    expect(fold([...history, ranA]).frozenTime).toBe('2027-01-01T09:00:00.000Z');
    expect(nextDueJob(fold([...history, ranA]))?.id).toBe('b');
    const ranB: TestClockEvent = { type: 'TestClockJobRan', data: { clockId: 'c1', jobId: 'b', seq: 1, at: '2027-01-01T10:00:00.000Z' } };
    given([...history, ranA])
      .when({ type: 'FinishClockAdvance', data: { clockId: 'c1' } }, NOW)
      .then([]);
    given([...history, ranA, ranB])
      .when({ type: 'FinishClockAdvance', data: { clockId: 'c1' } }, NOW)
      .then([{ type: 'TestClockReady', data: { clockId: 'c1', frozenTime: '2027-01-02T00:00:00.000Z' } }]);
    expect([...fold([...history, ranA, ranB]).pending.keys()]).toEqual(['later']);
  });

  it('keeps a job armed again while it ran, and forgets a cancelled one', () => {
    const history = [created, armed('a', '2027-01-01T09:00:00.000Z', 1), armed('a', '2027-01-01T09:00:01.000Z', 2)];
    const ran: TestClockEvent = { type: 'TestClockJobRan', data: { clockId: 'c1', jobId: 'a', seq: 1, at: '2027-01-01T09:00:00.000Z' } };
    expect(fold([...history, ran]).pending.get('a')?.runAt).toBe('2027-01-01T09:00:01.000Z');
    expect(fold([...history, { type: 'TestClockJobCancelled', data: { clockId: 'c1', jobId: 'a' } }]).pending.size).toBe(0);
  });

  it('once deleted, takes no advance (not found), arms, runs and finishes nothing, and drops what was pending', () => {
    const deleted: TestClockEvent = { type: 'TestClockDeleted', data: { clockId: 'c1', partnerId: 'p_test' } };
    const history = [created, armed('a', '2027-01-01T09:00:00.000Z', 1), advancing('2027-01-02T00:00:00.000Z')];
    given(history)
      .when({ type: 'DeleteTestClock', data: { clockId: 'c1' } }, NOW)
      .then([deleted]);
    given([...history, deleted])
      .when({ type: 'DeleteTestClock', data: { clockId: 'c1' } }, NOW)
      .then([]);
    given([...history, deleted])
      .when({ type: 'AdvanceTestClock', data: { clockId: 'c1', to: '2027-01-03T00:00:00Z' } }, NOW)
      .thenThrows(NotFound);
    const job = { id: 'b', kind: 'release-hold', runAt: new Date('2027-01-01T10:00:00Z'), data: {} };
    given([...history, deleted])
      .when({ type: 'ArmClockJob', data: { clockId: 'c1', job } }, NOW)
      .then([]);
    given([...history, deleted])
      .when({ type: 'FinishClockAdvance', data: { clockId: 'c1' } }, NOW)
      .then([]);
    const state = fold([...history, deleted]);
    expect([state.deleted, state.pending.size, nextDueJob(state)]).toEqual([true, 0, null]);
  });

  it('records a write dated at its time or later, even while advancing, and refuses one dated before it (the clock moved)', () => {
    const write = (at: string) => ({ type: 'RecordClockWrite' as const, data: { clockId: 'c1', at } });
    const recorded = (at: string): TestClockEvent => ({ type: 'TestClockWriteRecorded', data: { clockId: 'c1', at } });
    given([created])
      .when(write('2027-01-01T00:00:00.000Z'), NOW)
      .then([recorded('2027-01-01T00:00:00.000Z')]);
    // An advance under way has not moved the clock's time yet: a call begun before it is still in its day.
    given([created, advancing('2027-01-03T00:00:00.000Z')])
      .when(write('2027-01-01T00:00:00.000Z'), NOW)
      .then([recorded('2027-01-01T00:00:00.000Z')]);
    const ran: TestClockEvent = { type: 'TestClockJobRan', data: { clockId: 'c1', jobId: 'a', seq: 1, at: '2027-01-02T00:00:00.000Z' } };
    given([created, advancing('2027-01-03T00:00:00.000Z'), ran])
      .when(write('2027-01-01T00:00:00.000Z'), NOW)
      .thenThrows(TestClockMoved, { message: 'the test clock moved while this call ran: make the call again' });
    given([created, advancing('2027-01-03T00:00:00.000Z'), ran])
      .when(write('2027-01-02T00:00:00.000Z'), NOW)
      .then([recorded('2027-01-02T00:00:00.000Z')]);
    expect(fold([created, recorded('2027-01-01T00:00:00.000Z')])).toEqual(fold([created]));
    given([]).when(write('2027-01-01T00:00:00.000Z'), NOW).thenThrows(NotFound);
  });
});
