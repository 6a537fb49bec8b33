import { MemoryEventStore } from '@deals/testing';
import { Decider, DomainEvent } from '../decider';
import type { CommandContext, CommandOutcome } from '../handle-command';
import { WrongExpectedRevision } from '../ports/event-store.port';
import { RequestWrites } from '../read-your-writes';
import { StreamCache } from './stream-cache';
import { BatchWriter, Waiting } from './write-batch';

/** A log in memory whose appends check the expected revision. */
class MemoryStore extends MemoryEventStore {}

class Refused extends Error {}

/** A stock of ten: a take of 0 has nothing to say, a take of more than is left is refused. */
type Taken = { type: 'Taken'; data: { n: number } };
type Restocked = { type: 'Restocked'; data: { n: number } };
type StockCommand = { type: 'Take' | 'Restock'; data: { n: number } };
const stock: Decider<{ left: number }, StockCommand, Taken | Restocked> = {
  initialState: () => ({ left: 10 }),
  decide: ({ type, data: { n } }, state) => {
    if (type === 'Restock') return [{ type: 'Restocked', data: { n } }];
    if (n > state.left) throw new Refused(`${n} > ${state.left}`);
    return n === 0 ? [] : [{ type: 'Taken', data: { n } }];
  },
  evolve: (state, { type, data: { n } }) => ({ left: type === 'Taken' ? state.left - n : state.left + n }),
};
const take = (n: number): StockCommand => ({ type: 'Take', data: { n } });
const taken = (n: number): Taken => ({ type: 'Taken', data: { n } });
const restocked = (n: number): Restocked => ({ type: 'Restocked', data: { n } });

type Settled = PromiseSettledResult<CommandOutcome<unknown, DomainEvent>>;

/** Writes one batch of `commands` on `streamId`, as the lanes would give it, and waits for every answer. */
async function write(
  writer: BatchWriter,
  streamId: string,
  commands: StockCommand[],
  options: { fresh?: boolean; context?: CommandContext } = {},
): Promise<Settled[]> {
  const context = options.context ?? { now: new Date(), metadata: { actor: 'test' } };
  const fresh = options.fresh === true;
  const answers: Array<Promise<CommandOutcome<unknown, DomainEvent>>> = [];
  const batch = commands.map((command) => {
    let waiting!: Waiting;
    const decider = stock as unknown as Waiting['decider'];
    answers.push(new Promise((resolve, reject) => (waiting = { decider, command, context, fresh, resolve, reject })));
    return waiting;
  });
  await writer.write(streamId, batch);
  return Promise.allSettled(answers);
}

const outcome = (settled: Settled) => (settled.status === 'fulfilled' ? settled.value : settled.reason);

function engine() {
  const store = new MemoryStore();
  const writer = new BatchWriter(store, StreamCache.of(store));
  const appends = jest.spyOn(store, 'append');
  const reads = jest.spyOn(store, 'readStream');
  return { store, writer, appends, reads };
}

describe('the write batching', () => {
  it('decides a batch in order against one state and appends it once; a refusal fails only its own command', async () => {
    const { store, writer, appends } = engine();
    const answers = await write(writer, 's-1', [take(4), take(9), take(0), take(3)]);
    const log = store.streams.get('s-1')!;
    expect(appends).toHaveBeenCalledTimes(1);
    expect(log.map((e) => e.data)).toEqual([{ n: 4 }, { n: 3 }]);
    expect(answers.map(outcome)).toEqual([
      { events: [taken(4)], state: { left: 6 }, revision: 0, position: log[1].position },
      expect.any(Refused),
      { events: [], state: { left: 6 }, revision: 0, position: log[1].position },
      { events: [taken(3)], state: { left: 3 }, revision: 1, position: log[1].position },
    ]);
  });

  it('decides the whole batch again on the newer state when its append conflicts', async () => {
    const { store, writer, appends } = engine();
    await write(writer, 's-2', [take(1)]);
    store.elsewhere('s-2', taken(8));
    const timers = jest.spyOn(global, 'setTimeout');
    // Decided on the cached state (9 left) both fit; on the stream as it is (1 left) only the first.
    const answers = await write(writer, 's-2', [take(1), take(1)]);
    // The first conflict is retried at once: the cache was merely behind.
    expect(timers).not.toHaveBeenCalled();
    timers.mockRestore();
    expect(appends.mock.calls.map(([, events, expected]) => [events.length, expected])).toEqual([
      [1, 'no_stream'],
      [2, 0],
      [1, 1],
    ]);
    expect(answers.map(outcome)).toEqual([expect.objectContaining({ state: { left: 0 }, revision: 2 }), expect.any(Refused)]);
    expect(store.streams.get('s-2')!.map((e) => e.data)).toEqual([{ n: 1 }, { n: 8 }, { n: 1 }]);
  });

  it('retries conflicts with back-off, up to its last attempt, and then throws the conflict', async () => {
    const { store, writer, appends } = engine();
    jest.spyOn(Math, 'random').mockReturnValue(0);
    appends.mockImplementation(async (streamId) => {
      throw new WrongExpectedRevision(streamId, 0, 1);
    });
    const timers = jest.spyOn(global, 'setTimeout');
    try {
      await expect(write(writer, 's-3', [take(1)])).rejects.toBeInstanceOf(WrongExpectedRevision);
      expect(appends).toHaveBeenCalledTimes(12);
      // A back-off before each retry but the first.
      expect(timers).toHaveBeenCalledTimes(10);
      expect(store.streams.has('s-3')).toBe(false);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('reads the stream before answering a refusal decided on the cached state, which was not checked', async () => {
    const { store, writer, reads } = engine();
    await write(writer, 's-4', [take(1)]);
    store.elsewhere('s-4', restocked(5));
    reads.mockClear();
    // 9 left as cached, 14 in truth.
    const [answer] = await write(writer, 's-4', [take(12)]);
    expect(reads.mock.calls).toEqual([['s-4', 1]]);
    expect(outcome(answer)).toMatchObject({ events: [taken(12)], state: { left: 2 }, revision: 2 });
  });

  it("reads the stream before answering a command with nothing to say on the cached state, and reports the last event's position", async () => {
    const { store, writer, reads, appends } = engine();
    await write(writer, 's-5', [take(1)]);
    const other = store.elsewhere('s-5', taken(2));
    reads.mockClear();
    appends.mockClear();
    const [answer] = await write(writer, 's-5', [take(0)]);
    expect(reads.mock.calls).toEqual([['s-5', 1]]);
    expect(appends).not.toHaveBeenCalled();
    expect(outcome(answer)).toEqual({ events: [], state: { left: 7 }, revision: 1, position: other.position });
  });

  it('answers a command with nothing to say on a stream without events with no revision and no position', async () => {
    const { writer } = engine();
    const [answer] = await write(writer, 's-6', [take(0)]);
    expect(outcome(answer)).toEqual({ events: [], state: { left: 10 }, revision: null, position: null });
  });

  it('decides a fresh stream without reading it, and on a read when it exists after all', async () => {
    const { store, writer, reads } = engine();
    await write(writer, 's-7', [take(2)], { fresh: true });
    expect(reads).not.toHaveBeenCalled();
    store.elsewhere('s-8', taken(9));
    const answers = await write(writer, 's-8', [take(1), take(1)], { fresh: true });
    expect(reads.mock.calls).toEqual([['s-8', 0]]);
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected']);
  });

  it("tells the caller's tracker of its commands' appends only, at the batch's position", async () => {
    const { store, writer } = engine();
    const writes = new RequestWrites();
    const context = { now: new Date(), metadata: { actor: 'test', writes } };
    await write(writer, 's-9', [take(0), take(11)], { context });
    expect(writes.positions.size).toBe(0);
    await write(writer, 's-9', [take(1), take(0), take(2)], { context });
    const log = store.streams.get('s-9')!;
    expect([...writes.positions]).toEqual([['Taken', log[1].position]]);
    expect(log.map((e) => Object.keys(e.metadata))).toEqual([
      ['occurredAt', 'actor'],
      ['occurredAt', 'actor'],
    ]);
  });
});
