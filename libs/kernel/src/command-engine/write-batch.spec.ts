import { randomUUID } from 'node:crypto';
import { MemoryEventStore } from '@deals/testing';
import { Decider, DomainEvent } from '../decider';
import type { CommandContext, CommandOutcome, Part, Waiting } from './command';
import { StoreBusy, StoreObserver, WrongExpectedRevision } from '../ports/event-store.port';
import { WriteContended } from '../errors';
import { RequestWrites } from '../read-your-writes';
import { StreamCache } from './stream-cache';
import { BatchWriter } from './write-batch';

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
    answers.push(
      new Promise((resolve, reject) => {
        const parts = [{ streamId, decider, command, fresh }];
        waiting = { decider, parts, context, resolve: (outcomes) => resolve(outcomes[0]), reject };
      }),
    );
    return waiting;
  });
  await writer.write(streamId, batch);
  return Promise.allSettled(answers);
}

type UnitSettled = PromiseSettledResult<Array<CommandOutcome<unknown, DomainEvent>>>;

/** A unit's command: `take` on `streamId`. */
const on = (streamId: string, command: StockCommand, fresh = false): Part => ({
  streamId,
  decider: stock as unknown as Part['decider'],
  command,
  fresh,
});

/** Writes one batch of units on the lane `streamId` (each unit's first part is on it), and waits for every answer. */
async function writeUnits(writer: BatchWriter, streamId: string, units: Part[][]): Promise<UnitSettled[]> {
  const context = { now: new Date(), metadata: { actor: 'test' } };
  const answers: Array<Promise<Array<CommandOutcome<unknown, DomainEvent>>>> = [];
  const batch = units.map((parts) => {
    let waiting!: Waiting;
    answers.push(new Promise((resolve, reject) => (waiting = { decider: parts[0].decider, parts, context, resolve, reject })));
    return waiting;
  });
  await writer.write(streamId, batch);
  return Promise.allSettled(answers);
}

const outcome = (settled: Settled | UnitSettled) => (settled.status === 'fulfilled' ? settled.value : settled.reason);

function engine(observer: StoreObserver | null = null) {
  const store = new MemoryStore(undefined, null, true, observer);
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

  it('retries conflicts with back-off, up to its last attempt, and then answers that the write was contended (a 503)', async () => {
    const contended: string[] = [];
    const { store, writer, appends } = engine({
      appended: () => undefined,
      committed: () => undefined,
      contended: (outcome) => void contended.push(outcome),
    });
    jest.spyOn(Math, 'random').mockReturnValue(0);
    appends.mockImplementation(async (streamId) => {
      throw new WrongExpectedRevision(streamId, 0, 1);
    });
    const timers = jest.spyOn(global, 'setTimeout');
    try {
      const written = write(writer, 's-3', [take(1)]);
      await expect(written).rejects.toBeInstanceOf(WriteContended);
      await expect(written).rejects.toMatchObject({ httpStatus: 503, errorType: 'service_unavailable', retryAfterSeconds: 1 });
      expect(appends).toHaveBeenCalledTimes(12);
      // A back-off before each retry but the first two (the stream read again, then held).
      expect(timers).toHaveBeenCalledTimes(9);
      // Told to the store's observer (the service's metrics): read again once, held ten times, then given up.
      expect(contended).toEqual(['decided_again', ...Array(10).fill('held'), 'gave_up']);
      expect(store.streams.has('s-3')).toBe(false);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it("decides with the lane's stream held once its writes lost twice, on the stream as the hold finds it", async () => {
    const { store, writer } = engine();
    await write(writer, 's-3h', [take(1)]);
    // Another process keeps writing first: the next two appends of this one conflict.
    const append: MemoryStore['append'] = (...args) => MemoryEventStore.prototype.append.apply(store, args);
    let raced = 0;
    let holding = false;
    jest.spyOn(store, 'append').mockImplementation(async (streamId, events, expected) => {
      if (raced < 2 && !holding) {
        raced++;
        await append(
          streamId,
          [{ id: randomUUID(), type: 'Taken', data: { n: 1 }, metadata: { occurredAt: new Date(0).toISOString() } }],
          'any',
        );
      }
      return append(streamId, events, expected);
    });
    const held: string[] = [];
    const appendHolding: MemoryStore['appendHolding'] = (...args) => MemoryEventStore.prototype.appendHolding.apply(store, args);
    jest.spyOn(store, 'appendHolding').mockImplementation(async (stream, decide) => {
      held.push(stream);
      holding = true;
      return appendHolding(stream, decide);
    });
    try {
      const [answer] = await write(writer, 's-3h', [take(2)]);
      expect(held).toEqual(['s-3h']);
      expect(outcome(answer)).toMatchObject({ state: { left: 5 }, revision: 3 });
      expect(store.streams.get('s-3h')!.map((e) => e.data)).toEqual([{ n: 1 }, { n: 1 }, { n: 1 }, { n: 2 }]);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('tries again after a back-off when the store could not order the append in time, and then writes it', async () => {
    const { store, writer, appends } = engine();
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const real = appends.getMockImplementation() ?? MemoryEventStore.prototype.append.bind(store);
    appends.mockRejectedValueOnce(new StoreBusy('not ordered')).mockImplementation(real);
    try {
      const [answer] = await write(writer, 's-3b', [take(2)]);
      expect(outcome(answer)).toMatchObject({ state: { left: 8 }, revision: 0 });
      expect(appends).toHaveBeenCalledTimes(2);
      expect(store.streams.get('s-3b')!.map((e) => e.data)).toEqual([{ n: 2 }]);
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

  describe('units of work over several streams', () => {
    it("appends a batch's units in one write across their streams, each part answered with its stream's outcome", async () => {
      const { store, writer, appends } = engine();
      const across = jest.spyOn(store, 'appendToStreams');
      const [first, second] = await writeUnits(writer, 'lane-1', [
        [on('lane-1', take(2)), on('a-1', take(1))],
        [on('lane-1', take(3)), on('b-1', take(4), true), on('a-1', take(5))],
      ]);
      expect(appends).not.toHaveBeenCalled();
      expect(across.mock.calls.map(([parts]) => parts.map((p) => [p.streamId, p.events.length, p.expected]))).toEqual([
        [
          ['lane-1', 2, 'no_stream'],
          ['a-1', 2, 'no_stream'],
          ['b-1', 1, 'no_stream'],
        ],
      ]);
      const last = store.streams.get('b-1')![0].position;
      expect(outcome(first)).toEqual([
        { events: [taken(2)], state: { left: 8 }, revision: 0, position: last },
        { events: [taken(1)], state: { left: 9 }, revision: 0, position: last },
      ]);
      // Its part on a-1 is decided against what the first unit left there.
      expect(outcome(second)).toEqual([
        { events: [taken(3)], state: { left: 5 }, revision: 1, position: last },
        { events: [taken(4)], state: { left: 6 }, revision: 0, position: last },
        { events: [taken(5)], state: { left: 4 }, revision: 1, position: last },
      ]);
    });

    it('writes nothing of a unit one part of which is refused, and decides the next units without it', async () => {
      const { store, writer } = engine();
      const answers = await writeUnits(writer, 'lane-2', [
        [on('lane-2', take(6)), on('a-2', take(11))],
        [on('lane-2', take(4)), on('b-2', take(1))],
      ]);
      expect(outcome(answers[0])).toBeInstanceOf(Refused);
      // The refused unit's 6 were not taken: the lane had 10 left for the second.
      expect(outcome(answers[1])[0]).toMatchObject({ state: { left: 6 } });
      expect(store.streams.has('a-2')).toBe(false);
      expect(store.streams.get('lane-2')!.map((e) => e.data)).toEqual([{ n: 4 }]);
    });

    it('answers the first refused part, in the order the unit gives them', async () => {
      const { writer } = engine();
      const [answer] = await writeUnits(writer, 'lane-3', [[on('lane-3', take(12)), on('a-3', take(13))]]);
      expect((outcome(answer) as Error).message).toBe('12 > 10');
    });

    it('reads again only the stream whose revision another process changed, and decides the batch again on it', async () => {
      const { store, writer, reads } = engine();
      await writeUnits(writer, 'lane-4', [[on('lane-4', take(1)), on('a-4', take(1))]]);
      store.elsewhere('a-4', taken(8));
      reads.mockClear();
      // On the cached a-4 (9 left) both fit; on a-4 as it is (1 left), only the first unit.
      const answers = await writeUnits(writer, 'lane-4', [
        [on('lane-4', take(1)), on('a-4', take(1))],
        [on('lane-4', take(1)), on('a-4', take(1))],
      ]);
      expect(reads.mock.calls).toEqual([['a-4', 1]]);
      expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected']);
      expect(store.streams.get('lane-4')!.map((e) => e.data)).toEqual([{ n: 1 }, { n: 1 }]);
      expect(store.streams.get('a-4')!.map((e) => e.data)).toEqual([{ n: 1 }, { n: 8 }, { n: 1 }]);
    });

    it("reads a part's stream before answering a refusal decided on its cached fold", async () => {
      const { store, writer, reads } = engine();
      await writeUnits(writer, 'lane-5', [[on('lane-5', take(1)), on('a-5', take(1))]]);
      store.elsewhere('a-5', restocked(5));
      reads.mockClear();
      const [answer] = await writeUnits(writer, 'lane-5', [[on('lane-5', take(1)), on('a-5', take(12))]]);
      expect(reads.mock.calls).toEqual([['a-5', 1]]);
      expect(outcome(answer)[1]).toMatchObject({ events: [taken(12)], state: { left: 2 }, revision: 2 });
    });

    it('answers a unit whose parts all had nothing to say at the latest position of its streams', async () => {
      const { store, writer } = engine();
      await writeUnits(writer, 'lane-6', [[on('lane-6', take(1)), on('a-6', take(1))]]);
      const [answer] = await writeUnits(writer, 'lane-6', [[on('lane-6', take(0)), on('a-6', take(0))]]);
      const position = store.streams.get('a-6')![0].position;
      expect(outcome(answer).map((o: CommandOutcome<unknown, DomainEvent>) => o.position)).toEqual([position, position]);
    });
  });
});
