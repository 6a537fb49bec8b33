import { MemoryEventStore } from '@deals/testing';
import { Decider } from './decider';
import { decideCommands, handleCommand, handleCommands } from './handle-command';
import { inlineDocument, registerInlineProjections } from './command-engine/inline-projections';
import type { AppendResult, StreamAppend } from './ports/event-store.port';
import { appendAll, inlineKey, InlineViews } from './ports/event-store.capabilities';
import type { ViewDocument } from './ports/view-store.port';
import { defineProjection } from './projection';
import { RequestWrites } from './read-your-writes';

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

  it('decides two commands on one stream in order, the second on the state the first leaves, written in the same append', async () => {
    const store = new MemoryEventStore();
    const across = jest.spyOn(store, 'appendToStreams');
    const parts = await handleCommands(
      store,
      [
        { streamId: 'hot', decider: counter, command: add(4), lane: true },
        { streamId: 'hot', decider: counter, command: add(5) },
        { streamId: 'b', decider: counter, command: add(1) },
      ],
      context,
    );
    expect(parts.map((p) => [p.state, p.revision])).toEqual([
      [{ total: 4 }, 0],
      [{ total: 9 }, 1],
      [{ total: 1 }, 0],
    ]);
    expect(across.mock.calls.map(([appends]) => appends.map((a) => [a.streamId, a.events.length]))).toEqual([
      [
        ['hot', 2],
        ['b', 1],
      ],
    ]);
    // The second refused on what the first leaves (9 + 1, then + 1): neither is written.
    const twice = [
      { streamId: 'hot', decider: counter, command: add(1) },
      { streamId: 'hot', decider: counter, command: add(1) },
    ];
    await expect(handleCommands(store, twice, context)).rejects.toThrow('10 + 1 > 10');
    expect(store.streams.get('hot')).toHaveLength(2);
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

  describe('inline projections: documents written with a unit', () => {
    /** A memory store that "writes" the documents given with appends: it keeps them, and writes those `refuse` does not name. */
    class StoreWritingViews extends MemoryEventStore {
      readonly written: Array<{ appends: string[]; views: InlineViews }> = [];
      refuse = new Set<string>();
      readonly writesViews = true;
      async appendWithViews(
        appends: readonly StreamAppend[],
        views: InlineViews,
      ): Promise<{ results: AppendResult[]; written: ReadonlySet<string> }> {
        const results = await appendAll(this, appends);
        this.written.push({ appends: appends.map((a) => a.streamId), views });
        const keys = views.flatMap(({ collection, documents }) => documents.map(({ doc }) => inlineKey(collection, doc._id)));
        return { results, written: new Set(keys.filter((key) => !this.refuse.has(key))) };
      }
    }

    /** Each stream's running total, begun by its first `Added`. */
    const totals = defineProjection<ViewDocument & { n: number }>({
      name: 'totals',
      handles: ['Added'],
      indexes: [],
      inline: { bornOf: [] },
      documentIds: (event) => [event.streamId],
      evolve: (view, event, id) => ({ _id: id, _pos: event.position, n: (view?.n ?? 0) + (event.data as { n: number }).n }),
    });
    /** Begun by any `Added`: every unit's documents are folded from nothing. */
    const fresh = { ...totals, inline: { bornOf: ['Added'] } };

    it("writes the documents of a batch's accepted units with its appends, and tells each request its views are shown", async () => {
      const store = new StoreWritingViews();
      registerInlineProjections(store, [fresh]);
      const [first, second, refused] = [new RequestWrites(), new RequestWrites(), new RequestWrites()];
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
      // One write for the batch, with both accepted units' documents; nothing of the refused unit.
      expect(store.written).toHaveLength(1);
      const written = store.written[0].views[0];
      expect(written.collection).toBe('totals');
      expect(written.documents.map(({ doc }) => [doc._id, (doc as ViewDocument & { n: number }).n])).toEqual([
        ['hot', 2],
        ['p1', 1],
        ['hot', 3],
        ['p2', 1],
      ]);
      expect([...first.shown]).toEqual(['totals']);
      expect([...second.shown]).toEqual(['totals']);
      expect([...refused.shown]).toEqual([]);
      expect(inlineDocument(second, fresh, 'p2')).toEqual({ doc: { _id: 'p2', _pos: await store.head(), n: 1 }, written: true });
    });

    it('shows the request no view whose document the store did not write, and folds none onto a document it does not know', async () => {
      const store = new StoreWritingViews();
      registerInlineProjections(store, [fresh]);
      store.refuse.add('totals b');
      const writes = new RequestWrites();
      await handleCommand(store, 'b', counter, add(1), { ...context, metadata: { actor: 'test', writes } });
      expect(writes.shown.size).toBe(0);
      expect(inlineDocument(writes, fresh, 'b')?.written).toBe(false);
      // Not begun by the request's units: nothing to rest on, nothing written.
      const other = new StoreWritingViews();
      registerInlineProjections(other, [totals]);
      const later = new RequestWrites();
      await handleCommand(other, 'a', counter, add(1), { ...context, metadata: { actor: 'test', writes: later } });
      expect(other.written).toEqual([]);
      expect(inlineDocument(later, totals, 'a')).toBeNull();
    });

    it('asks nothing of a store that cannot write views, and still folds the documents for an answer', async () => {
      const plain = new MemoryEventStore();
      registerInlineProjections(plain, [fresh]);
      const writes = new RequestWrites();
      await handleCommand(plain, 'a', counter, add(1), { ...context, metadata: { actor: 'test', writes } });
      expect(writes.shown.size).toBe(0);
      expect(inlineDocument(writes, fresh, 'a')).toEqual({ doc: { _id: 'a', _pos: await plain.head(), n: 1 }, written: false });
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
