import { fold } from '@deals/kernel';
import {
  BULK_CHUNK_SIZE,
  KnownBulkJob,
  knownJob,
  BulkJobCompletedAlready,
  chunkToRun,
  BulkJobCommand,
  bulkJobDecider,
  bulkJobQueueDecider,
  isLastRun,
  itemBytes,
  ITEMS_EVENT_BYTES,
  MAX_CHUNK_RUNS,
  MAX_OPEN_BULK_JOBS,
  nextChunk,
  SINGLE_CALL_BODY_LIMIT,
  TooManyBulkJobs,
} from './bulk-job.decider';
import type { BulkItemResult, BulkJobEvent } from './bulk-job.events';

const now = new Date('2026-06-15T12:00:00Z');
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ reference: `r${i}`, email: `u${i}@example.com` }));
const result = (index: number, status: BulkItemResult['status'] = 'succeeded'): BulkItemResult => ({
  index,
  reference: `r${index}`,
  status,
  resourceId: status === 'failed' ? null : `id${index}`,
  doneBy: null,
  error: status === 'failed' ? { status: 422, body: { status: 'error' } } : null,
});

/** Decides the commands one after the other, as the stream would hold them. */
function run(commands: BulkJobCommand[]): { events: BulkJobEvent[]; state: KnownBulkJob } {
  const events: BulkJobEvent[] = [];
  let state = bulkJobDecider.initialState();
  for (const command of commands) {
    const decided = bulkJobDecider.decide(command, state, now);
    events.push(...decided);
    state = decided.reduce(bulkJobDecider.evolve, state);
  }
  return { events, state: knownJob(state) };
}

describe('the bulk job decider', () => {
  const accept = (n: number): BulkJobCommand => ({
    type: 'AcceptBulkJob',
    data: { jobId: 'j', partnerId: 'p', kind: 'users', items: items(n), sizes: items(n).map(itemBytes) },
  });
  const start: BulkJobCommand = { type: 'StartBulkJob', data: { jobId: 'j' } };
  const record = (chunk: number, results: BulkItemResult[]): BulkJobCommand => ({
    type: 'RecordBulkChunk',
    data: { jobId: 'j', chunk, results },
  });

  it('keeps the items in chunks of their own, in order', () => {
    const { events, state } = run([accept(2 * BULK_CHUNK_SIZE + 1)]);
    expect(events.map((e) => e.type)).toEqual(['BulkJobAccepted', 'BulkJobItemsAdded', 'BulkJobItemsAdded', 'BulkJobItemsAdded']);
    const added = events.slice(1) as Array<Extract<BulkJobEvent, { type: 'BulkJobItemsAdded' }>>;
    expect(added.map((e) => [e.data.chunk, e.data.items.length])).toEqual([
      [0, BULK_CHUNK_SIZE],
      [1, BULK_CHUNK_SIZE],
      [2, 1],
    ]);
    expect(added[2].data.items[0].reference).toBe(`r${2 * BULK_CHUNK_SIZE}`);
    expect([state.status, state.itemCount, nextChunk(state)]).toEqual(['accepted', 2 * BULK_CHUNK_SIZE + 1, 0]);
    // Accepted again (a retried write): nothing more.
    expect(bulkJobDecider.decide(accept(3), state, now)).toEqual([]);
  });

  it('keeps a chunk of large items in parts of a bounded size, and an item larger than its call takes as its reference', () => {
    const big = 'x'.repeat(100 * 1024);
    const sent = [
      ...Array.from({ length: 5 }, (_, i) => ({ reference: `b${i}`, email: `b${i}@example.com`, partner_data: { big } })),
      { reference: 'huge', email: 'huge@example.com', partner_data: { big: 'x'.repeat(SINGLE_CALL_BODY_LIMIT) } },
      { reference: 'last', email: 'last@example.com' },
    ];
    const { events } = run([
      { type: 'AcceptBulkJob', data: { jobId: 'j', partnerId: 'p', kind: 'users', items: sent, sizes: sent.map(itemBytes) } },
    ]);
    const added = events.slice(1) as Array<Extract<BulkJobEvent, { type: 'BulkJobItemsAdded' }>>;
    expect(added.map((e) => e.data.items.map((item) => item.reference))).toEqual([
      ['b0', 'b1'],
      ['b2', 'b3'],
      ['b4', 'huge', 'last'],
    ]);
    expect(added.every((e) => e.data.chunk === 0 && Buffer.byteLength(JSON.stringify(e.data)) < ITEMS_EVENT_BYTES + 1024)).toBe(true);
    expect(added[2].data.items[1]).toEqual({ reference: 'huge' });
    expect(added.map((e) => e.data.oversize)).toEqual([undefined, undefined, [5]]);
  });

  it("records each chunk's results once, counts them, and completes only once every chunk's are in", () => {
    const { state } = run([
      accept(BULK_CHUNK_SIZE + 2),
      start,
      record(1, [result(BULK_CHUNK_SIZE), result(BULK_CHUNK_SIZE + 1, 'failed')]),
    ]);
    expect(nextChunk(state)).toBe(0);
    expect(() => bulkJobDecider.decide({ type: 'CompleteBulkJob', data: { jobId: 'j' } }, state, now)).toThrow(/chunk 0/);
    expect(bulkJobDecider.decide(record(1, [result(BULK_CHUNK_SIZE, 'matched')]), state, now)).toEqual([]);
    const done = run([
      accept(BULK_CHUNK_SIZE + 2),
      start,
      record(1, [result(BULK_CHUNK_SIZE), result(BULK_CHUNK_SIZE + 1, 'failed')]),
      record(0, [result(0, 'matched')]),
      { type: 'CompleteBulkJob', data: { jobId: 'j' } },
    ]);
    expect(done.state.status).toBe('completed');
    expect(done.events.at(-1)).toEqual({
      type: 'BulkJobCompleted',
      data: {
        jobId: 'j',
        partnerId: 'p',
        kind: 'users',
        counts: { succeeded: 1, matched: 1, already_done: 0, failed: 1 },
        completedAt: now.toISOString(),
      },
    });
    expect(fold(bulkJobDecider, done.events)).toEqual(done.state);
    const erased = bulkJobDecider.decide({ type: 'RecordItemsErased', data: { jobId: 'j' } }, done.state, now);
    expect(erased).toEqual([{ type: 'BulkJobItemsErased', data: { jobId: 'j', partnerId: 'p', erasedAt: now.toISOString() } }]);
    expect(
      bulkJobDecider.decide({ type: 'RecordItemsErased', data: { jobId: 'j' } }, erased.reduce(bulkJobDecider.evolve, done.state), now),
    ).toEqual([]);
  });

  it("counts a running chunk's failed runs until its results are recorded: the last of its runs is known", () => {
    const fail = (chunk: number): BulkJobCommand => ({ type: 'RecordChunkFailure', data: { jobId: 'j', chunk } });
    expect(bulkJobDecider.decide(fail(0), run([accept(3)]).state, now)).toEqual([]);
    const failing = run([accept(BULK_CHUNK_SIZE + 1), start, ...Array.from({ length: MAX_CHUNK_RUNS - 2 }, () => fail(0)), fail(1)]);
    expect(failing.events.at(-1)).toEqual({
      type: 'BulkJobChunkFailed',
      data: { jobId: 'j', partnerId: 'p', chunk: 1, failedAt: now.toISOString() },
    });
    expect([isLastRun(failing.state, 0), isLastRun(failing.state, 1)]).toEqual([false, false]);
    const last = knownJob(bulkJobDecider.decide(fail(0), failing.state, now).reduce(bulkJobDecider.evolve, failing.state));
    expect([isLastRun(last, 0), isLastRun(last, 1)]).toEqual([true, false]);
    const recorded = knownJob(bulkJobDecider.decide(record(0, [result(0)]), last, now).reduce(bulkJobDecider.evolve, last));
    expect([...recorded.failedRuns]).toEqual([[1, 1]]);
    expect(bulkJobDecider.decide(fail(0), recorded, now)).toEqual([]);
  });

  it('cancels a job not started at once, and a running one once its chunk under way is recorded', () => {
    const cancel = (partnerId = 'p'): BulkJobCommand => ({ type: 'CancelBulkJob', data: { jobId: 'j', partnerId } });
    const complete: BulkJobCommand = { type: 'CompleteBulkJob', data: { jobId: 'j' } };
    expect(() => bulkJobDecider.decide(cancel('other'), run([accept(3)]).state, now)).toThrow(/not found/);
    const queued = run([accept(3), cancel()]);
    expect(queued.events.slice(2).map((e) => e.type)).toEqual(['BulkJobCancelled', 'BulkJobCompleted']);
    expect(queued.events.at(-1)!.data).toMatchObject({ cancelled: true, counts: { succeeded: 0, failed: 0 } });
    expect(bulkJobDecider.decide(start, queued.state, now)).toEqual([]);
    expect(bulkJobDecider.decide(cancel(), queued.state, now)).toEqual([]);
    const running = run([accept(BULK_CHUNK_SIZE + 1), start, cancel()]);
    expect([running.state.status, running.state.cancelled, chunkToRun(running.state)]).toEqual(['running', true, 0]);
    // The chunk that was next at the cancel (perhaps under way) has its results before the job completes; no other runs.
    expect(() => bulkJobDecider.decide(complete, running.state, now)).toThrow(/chunk 0/);
    // The chunk under way is recorded, then the job completes with the other chunk never run.
    const done = run([accept(BULK_CHUNK_SIZE + 1), start, cancel(), record(0, [result(0)]), complete]);
    expect(done.events.at(-1)).toMatchObject({ type: 'BulkJobCompleted', data: { cancelled: true, counts: { succeeded: 1 } } });
    expect(() => bulkJobDecider.decide(cancel(), run([accept(1), start, record(0, [result(0)]), complete]).state, now)).toThrow(
      BulkJobCompletedAlready,
    );
  });

  it('keeps the key that sent a job, and says why it was cancelled when its key was revoked', () => {
    const byKey: BulkJobCommand = {
      type: 'AcceptBulkJob',
      data: { jobId: 'j', partnerId: 'p', kind: 'users', items: items(1), sizes: items(1).map(itemBytes), keyId: 'k1' },
    };
    const revoked: BulkJobCommand = { type: 'CancelBulkJob', data: { jobId: 'j', partnerId: 'p', reason: 'credential_revoked' } };
    const accepted = run([byKey]);
    expect([accepted.events[0].data, accepted.state.keyId]).toEqual([expect.objectContaining({ keyId: 'k1' }), 'k1']);
    // Without a key (accepted before keys were kept, or by a v3 password): none said.
    expect(run([accept(1)]).events[0].data).not.toHaveProperty('keyId');
    expect(run([byKey, revoked]).events[2]).toEqual({
      type: 'BulkJobCancelled',
      data: { jobId: 'j', partnerId: 'p', cancelledAt: now.toISOString(), reason: 'credential_revoked' },
    });
    // The partner's own cancel says no reason.
    expect(run([byKey, { type: 'CancelBulkJob', data: { jobId: 'j', partnerId: 'p' } }]).events[2].data).not.toHaveProperty('reason');
  });

  it('refuses results before the job started, of a chunk it has not, and of a job unknown', () => {
    const accepted = run([accept(3)]).state;
    expect(() => bulkJobDecider.decide(record(0, [result(0)]), accepted, now)).toThrow(/before the job started/);
    const running = run([accept(3), start]).state;
    expect(() => bulkJobDecider.decide(record(1, [result(0)]), running, now)).toThrow(RangeError);
    expect(() => bulkJobDecider.decide(start, bulkJobDecider.initialState(), now)).toThrow(/not found/);
    expect(bulkJobDecider.decide(start, running, now)).toEqual([]);
  });
});

describe("a partner's bulk job queue", () => {
  const queue = (jobId: string) => ({ type: 'QueueBulkJob' as const, data: { partnerId: 'p', jobId } });
  const dequeue = (jobId: string) => ({ type: 'DequeueBulkJob' as const, data: { partnerId: 'p', jobId } });

  it(`holds at most ${MAX_OPEN_BULK_JOBS} open jobs, in the order accepted, and takes another once one leaves`, () => {
    let state = bulkJobQueueDecider.initialState();
    for (let i = 0; i < MAX_OPEN_BULK_JOBS; i++)
      state = bulkJobQueueDecider.decide(queue(`j${i}`), state, now).reduce(bulkJobQueueDecider.evolve, state);
    expect(state.open).toEqual(Array.from({ length: MAX_OPEN_BULK_JOBS }, (_, i) => `j${i}`));
    expect(() => bulkJobQueueDecider.decide(queue('late'), state, now)).toThrow(TooManyBulkJobs);
    expect(bulkJobQueueDecider.decide(queue('j0'), state, now)).toEqual([]);
    state = bulkJobQueueDecider.decide(dequeue('j0'), state, now).reduce(bulkJobQueueDecider.evolve, state);
    expect(state.open[0]).toBe('j1');
    expect(bulkJobQueueDecider.decide(dequeue('j0'), state, now)).toEqual([]);
    expect(bulkJobQueueDecider.decide(queue('late'), state, now)).toHaveLength(1);
  });
});
