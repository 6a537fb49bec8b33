import {
  handleCommand,
  inTestClock,
  loadAggregate,
  ManualClock,
  TestClockCommand,
  testClockDecider,
  testClockStream,
  TestClockAwareClock,
  underTestClock,
} from '@deals/kernel';
import { MemoryEventStore } from '@deals/testing';
import { TestClockAgenda } from './test-clock-agenda';
import { TimersScheduler } from './timers/timers-scheduler.adapter';

describe('TestClockAgenda', () => {
  const real = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const sandbox = 'p1_test';
  const clockId = 'clk1';
  let store: MemoryEventStore;
  let inner: TimersScheduler;
  let agenda: TestClockAgenda;
  const ran: Array<{ id: string; at: string }> = [];
  const time = new TestClockAwareClock(real);

  const onClock = (command: TestClockCommand) =>
    handleCommand(store, testClockStream(clockId), testClockDecider, command, { now: real.now(), metadata: { actor: 'test' } });
  const armUnder = (id: string, runAt: string, kind = 'note') =>
    inTestClock({ clockId, partnerId: underTestClock(sandbox, clockId), at: new Date('2027-01-01T00:00:00Z') }, () =>
      agenda.schedule({ id, kind, runAt: new Date(runAt), data: {} }),
    );
  const clockState = async () => (await loadAggregate(store, testClockStream(clockId), testClockDecider)).state;

  beforeEach(async () => {
    ran.length = 0;
    store = new MemoryEventStore();
    inner = new TimersScheduler(real);
    agenda = new TestClockAgenda(inner, store, real);
    agenda.handle('note', async (job) => {
      ran.push({ id: job.id, at: time.now().toISOString() });
    });
    await onClock({ type: 'CreateTestClock', data: { clockId, partnerId: sandbox, name: null, frozenTime: '2027-01-01T00:00:00.000Z' } });
  });
  afterEach(() => agenda.close());

  it('keeps the jobs armed under a clock on its stream, and runs them in due order at their instants when an advance passes them', async () => {
    await armUnder('late', '2027-01-01T03:00:00Z');
    await armUnder('early', '2027-01-01T01:00:00Z');
    await armUnder('beyond', '2027-01-02T00:00:00Z');
    expect((await inner.list(10)).map((j) => j.id)).toEqual([]);
    await onClock({ type: 'AdvanceTestClock', data: { clockId, to: '2027-01-01T12:00:00.000Z' } });
    await agenda.advance(clockId);
    expect(ran).toEqual([
      { id: 'early', at: '2027-01-01T01:00:00.000Z' },
      { id: 'late', at: '2027-01-01T03:00:00.000Z' },
    ]);
    const state = await clockState();
    expect([state.status, state.frozenTime, [...state.pending.keys()]]).toEqual(['ready', '2027-01-01T12:00:00.000Z', ['beyond']]);
  });

  it('runs a failing job again, as real time would, and records it failed only when every run failed', async () => {
    let flaky = 1;
    agenda.handle('flaky', async (job) => {
      if (flaky-- > 0) throw new Error('the store blinked');
      ran.push({ id: job.id, at: time.now().toISOString() });
    });
    let brokenRuns = 0;
    agenda.handle('broken', async () => {
      brokenRuns++;
      throw new Error('always');
    });
    await armUnder('flaky-job', '2027-01-01T01:00:00Z', 'flaky');
    await armUnder('broken-job', '2027-01-01T02:00:00Z', 'broken');
    await onClock({ type: 'AdvanceTestClock', data: { clockId, to: '2027-01-01T12:00:00.000Z' } });
    await agenda.advance(clockId);
    expect(ran).toEqual([{ id: 'flaky-job', at: '2027-01-01T01:00:00.000Z' }]);
    const runs = (await store.readStream(testClockStream(clockId))).filter((e) => e.type === 'TestClockJobRan').map((e) => e.data);
    expect(runs).toEqual([
      expect.not.objectContaining({ failed: expect.anything() }),
      expect.objectContaining({ jobId: 'broken-job', failed: 'always' }),
    ]);
    expect(brokenRuns).toBe(3);
    expect((await clockState()).status).toBe('ready');
  }, 10_000);

  it('runs, before the clock is ready, a job armed while the advance ends (by a sweep, or from outside its run)', async () => {
    agenda.handle('sweep', async () => {
      if (ran.length === 0) await armUnder('from-the-sweep', '2027-01-01T05:00:00Z');
    });
    agenda.sweepAtEachAdvance('sweep');
    await onClock({ type: 'AdvanceTestClock', data: { clockId, to: '2027-01-01T12:00:00.000Z' } });
    await agenda.advance(clockId);
    expect(ran).toEqual([{ id: 'from-the-sweep', at: '2027-01-01T05:00:00.000Z' }]);
    expect((await clockState()).status).toBe('ready');
  });
});
