import { MemoryEventStore } from '@deals/testing';
import { Decider } from './decider';
import { decideCommands, handleCommand, handleCommands } from './handle-command';
import type { AppendResult, InlineViews, StreamAppend } from './ports/event-store.port';
import { appendAll } from './ports/event-store.capabilities';
import { PendingEvent, RequestWrites } from './read-your-writes';

/** A counter: `Add` of 0 has nothing to say, one past 10 is refused. */
type Added = { type: 'Added'; data: { n: number } };
type Add = { type: 'Add'; data: { n: number } };
const counter: Decider<{ total: number }, Add, Added> = {
  initialState: () => ({ total: 0 }),
  decide: ({ data: { n } }, state) => {
    if (state.total + n > 10) throw new RangeError(`${state.total} + ${n} > 10`);
    return n === 0 ? [] : [{ type: 'Added', data: { n } }];
  },
  evolve: (state, { data: { n } }) => ({ total: state.total + n }),
};
const other: typeof counter = { ...counter };
const add = (n: number): Add => ({ type: 'Add', data: { n } });
const context = { now: new Date('2026-06-15T12:00:00Z'), metadata: { actor: 'test' } };

describe('handleCommands', () => {
  it("writes a unit in its lane stream's turn, with the commands waiting there, in one write across streams", async () => {
    const store = new MemoryEventStore();
    const appends = jest.spyOn(store, 'append');
    const across = jest.spyOn(store, 'appendToStreams');
    const alone = handleCommand(store, 'hot', counter, add(1), context);
    const unit = handleCommands(
      store,
      [
        { streamId: 'lock-u1', decider: counter, command: add(1) },
        { streamId: 'hot', decider: counter, command: add(2), lane: true },
        { streamId: 'purchase-p1', decider: counter, command: add(3), freshStream: true },
      ],
      context,
    );
    const [one, parts] = await Promise.all([alone, unit]);
    expect(appends).not.toHaveBeenCalled();
    expect(across).toHaveBeenCalledTimes(1);
    expect(across.mock.calls[0][0].map((a) => [a.streamId, a.events.length])).toEqual([
      ['hot', 2],
      ['lock-u1', 1],
      ['purchase-p1', 1],
    ]);
    expect(one.state).toEqual({ total: 1 });
    expect(parts.map((p) => p.state)).toEqual([{ total: 1 }, { total: 3 }, { total: 3 }]);
    expect(new Set([one.position, ...parts.map((p) => p.position)]).size).toBe(1);
  });

  it('writes nothing of a refused unit, and answers its first refused part', async () => {
    const store = new MemoryEventStore();
    await expect(
      handleCommands(
        store,
        [
          { streamId: 'a', decider: counter, command: add(4) },
          { streamId: 'b', decider: counter, command: add(11) },
          { streamId: 'c', decider: counter, command: add(12) },
        ],
        context,
      ),
    ).rejects.toThrow('0 + 11 > 10');
    expect(store.streams.size).toBe(0);
  });

  it('refuses a unit without commands, or with two deciders for its lane stream', async () => {
    const store = new MemoryEventStore();
    await expect(handleCommands(store, [], context)).rejects.toBeInstanceOf(TypeError);
    await expect(
      handleCommands(
        store,
        [
          { streamId: 'a', decider: counter, command: add(1) },
          { streamId: 'a', decider: other, command: add(1) },
        ],
        context,
      ),
    ).rejects.toBeInstanceOf(TypeError);
  });

  describe('documents written with a unit (inline views)', () => {
    /** A memory store that "writes" the documents given with appends: it keeps them, with whether it wrote them. */
    class StoreWritingViews extends MemoryEventStore {
      readonly written: Array<{ appends: string[]; views: InlineViews }> = [];
      answer = true;
      override get writesViews(): boolean {
        return true;
      }
      override async appendWithViews(
        appends: readonly StreamAppend[],
        views: InlineViews,
      ): Promise<{ results: AppendResult[]; viewsWritten: boolean }> {
        const results = await appendAll(this, appends);
        this.written.push({ appends: appends.map((a) => a.streamId), views });
        return { results, viewsWritten: this.answer };
      }
    }

    /** A request whose units each write one document per stream they append to, named after it. */
    function request(asked: PendingEvent[][]): RequestWrites {
      const writes = new RequestWrites();
      writes.inlineViews = (pending) => {
        asked.push([...pending]);
        return [{ collection: 'totals', documents: pending.map((e) => ({ _id: e.streamId, _pos: '', n: (e.data as { n: number }).n })) }];
      };
      return writes;
    }

    it("writes the documents of a batch's accepted units with its appends, and tells each request its views are shown", async () => {
      const store = new StoreWritingViews();
      const asked: PendingEvent[][] = [];
      const [first, second, refused] = [request(asked), request(asked), request(asked)];
      const at = (writes: RequestWrites) => ({ ...context, metadata: { actor: 'test', writes } });
      await Promise.allSettled([
        handleCommands(
          store,
          [
            { streamId: 'hot', decider: counter, command: add(2), lane: true },
            { streamId: 'p1', decider: counter, command: add(1) },
          ],
          at(first),
        ),
        handleCommands(
          store,
          [
            { streamId: 'hot', decider: counter, command: add(3), lane: true },
            { streamId: 'p2', decider: counter, command: add(1) },
          ],
          at(second),
        ),
        handleCommands(
          store,
          [
            { streamId: 'hot', decider: counter, command: add(9), lane: true },
            { streamId: 'p3', decider: counter, command: add(1) },
          ],
          at(refused),
        ),
      ]);
      // One write for the batch, with both accepted units' documents; the refused unit was not asked.
      expect(store.written).toHaveLength(1);
      expect(store.written[0].views).toEqual([
        {
          collection: 'totals',
          documents: [
            { _id: 'hot', _pos: '', n: 2 },
            { _id: 'p1', _pos: '', n: 1 },
            { _id: 'hot', _pos: '', n: 3 },
            { _id: 'p2', _pos: '', n: 1 },
          ],
        },
      ]);
      expect(asked.map((events) => events.map((e) => e.streamId))).toEqual([
        ['hot', 'p1'],
        ['hot', 'p2'],
      ]);
      expect([...first.shown]).toEqual(['totals']);
      expect([...second.shown]).toEqual(['totals']);
      expect([...refused.shown]).toEqual([]);
    });

    it('leaves the views not shown when the store did not write them, and asks nothing of a store that cannot', async () => {
      const store = new StoreWritingViews();
      store.answer = false;
      const writes = request([]);
      await handleCommand(store, 'a', counter, add(1), { ...context, metadata: { actor: 'test', writes } });
      expect(store.written).toHaveLength(1);
      expect(writes.shown.size).toBe(0);

      const plain = new MemoryEventStore();
      const asked: PendingEvent[][] = [];
      await handleCommand(plain, 'a', counter, add(1), { ...context, metadata: { actor: 'test', writes: request(asked) } });
      expect(asked).toEqual([]);
    });
  });
});

describe('decideCommands', () => {
  const unit = (...ns: number[]) => ns.map((n, i) => ({ streamId: i === 1 ? 'hot' : `s${i}`, decider: counter, command: add(n) }));

  it('decides a unit as handleCommands would, on the streams as they are, and appends nothing', async () => {
    const store = new MemoryEventStore();
    await handleCommand(store, 'hot', counter, add(5), context);
    const written = await store.head();
    const appends = jest.spyOn(store, 'appendToStreams');
    const single = jest.spyOn(store, 'append');
    const outcomes = await decideCommands(store, [...unit(1, 4), { streamId: 'hot', decider: counter, command: add(0) }], context);
    expect(outcomes.map((o) => [o.events, o.state, o.revision])).toEqual([
      [[{ type: 'Added', data: { n: 1 } }], { total: 1 }, 0],
      [[{ type: 'Added', data: { n: 4 } }], { total: 9 }, 1],
      [[], { total: 9 }, 1],
    ]);
    expect(new Set(outcomes.map((o) => o.position))).toEqual(new Set([written]));
    expect(appends).not.toHaveBeenCalled();
    expect(single).not.toHaveBeenCalled();
    expect(await store.head()).toBe(written);
    // The same unit written for real: the outcome the dry run foretold.
    const real = await handleCommands(store, [...unit(1, 4), { streamId: 'hot', decider: counter, command: add(0) }], context);
    expect(real.map((o) => [o.events, o.state, o.revision])).toEqual(outcomes.map((o) => [o.events, o.state, o.revision]));
  });

  it('rejects with the refusal a write would give, and reads past a fold another process left behind', async () => {
    const store = new MemoryEventStore();
    await handleCommand(store, 'hot', counter, add(5), context);
    // Another process's write: not in this process's cached fold of the stream.
    await store.append(
      'hot',
      [{ id: '00000000-0000-4000-8000-000000000001', type: 'Added', data: { n: 5 }, metadata: { occurredAt: '', actor: 'x' } }],
      0,
    );
    await expect(decideCommands(store, unit(1, 1), context)).rejects.toThrow('10 + 1 > 10');
    await expect(handleCommands(store, unit(1, 1), context)).rejects.toThrow('10 + 1 > 10');
  });

  it('refuses a unit without commands, or with two deciders for a stream', async () => {
    const store = new MemoryEventStore();
    await expect(decideCommands(store, [], context)).rejects.toBeInstanceOf(TypeError);
    await expect(
      decideCommands(
        store,
        [
          { streamId: 'a', decider: counter, command: add(1) },
          { streamId: 'a', decider: other, command: add(1) },
        ],
        context,
      ),
    ).rejects.toBeInstanceOf(TypeError);
  });
});
