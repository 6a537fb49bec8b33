import { appendHolding, appendToStream, EventStore, isAtomicAcrossStreams, WrongExpectedRevision } from '@deals/kernel';
import { collect, ContractRun, event, stream } from './event-store-contract-support';

/** The contract's checks of appends: revisions, positions, conflicts, several streams at once, holding appends. */
export function appendChecks(run: ContractRun): void {
  let store: EventStore;
  beforeEach(() => (store = run.store));

  it('appends to a new stream and reads the events back in order with 0-based revisions', async () => {
    const s = stream('new');
    const first = event('ThingHappened', { n: 1, cents: 1999, nested: { a: ['x'] } });
    const result = await appendToStream(store, s, [first, event('ThingHappened', { n: 2 })], 'no_stream');
    expect(result.nextExpectedRevision).toBe(1);
    const read = await store.readStream(s);
    expect(read.map((e) => [e.revision, e.data])).toEqual([
      [0, first.data],
      [1, { n: 2 }],
    ]);
    expect(read[0]).toMatchObject({ id: first.id, type: 'ThingHappened', streamId: s, metadata: first.metadata });
    expect(read[1].position).toBe(result.position);
  });

  it('gives positions as fixed-width strings that order like the log', async () => {
    const s = stream('pos');
    for (let i = 0; i < 12; i++) await appendToStream(store, s, [event('Counted', { i })], i === 0 ? 'no_stream' : i - 1);
    const positions = (await store.readStream(s)).map((e) => e.position);
    expect(new Set(positions.map((p) => p.length)).size).toBe(1);
    expect([...positions].sort()).toEqual(positions);
    expect(new Set(positions).size).toBe(positions.length);
  });

  it('refuses an append at the wrong expected revision, saying the actual one', async () => {
    const s = stream('conflict');
    await appendToStream(store, s, [event('A')], 'no_stream');
    await expect(appendToStream(store, s, [event('B')], 'no_stream')).rejects.toBeInstanceOf(WrongExpectedRevision);
    const error = await appendToStream(store, s, [event('B')], 5).catch((e) => e);
    expect(error).toBeInstanceOf(WrongExpectedRevision);
    expect(error.actual).toBe(0);
    await expect(appendToStream(store, stream('absent'), [event('B')], 0)).rejects.toMatchObject({ actual: 'no_stream' });
    expect((await appendToStream(store, s, [event('B')], 0)).nextExpectedRevision).toBe(1);
    expect((await appendToStream(store, s, [event('C')], 'any')).nextExpectedRevision).toBe(2);
  });

  it('lets exactly one of two concurrent appends at the same revision win', async () => {
    const s = stream('race');
    await appendToStream(store, s, [event('A')], 'no_stream');
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => appendToStream(store, s, [event('B', { i })], 0)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(WrongExpectedRevision);
    expect(await store.readStream(s)).toHaveLength(2);
  });

  describe('appending to several streams at once', () => {
    it('writes each append at its expected revision, in the order given, and answers each one', async () => {
      const [known, fresh, other] = [stream('many-known'), stream('many-fresh'), stream('many-other')];
      await appendToStream(store, known, [event('A')], 'no_stream');
      const head = await store.head();
      const results = await store.appendToStreams([
        { streamId: known, events: [event('B', { n: 1 }), event('B', { n: 2 })], expected: 0 },
        { streamId: fresh, events: [event('C')], expected: 'no_stream' },
        { streamId: other, events: [event('D')], expected: 'any' },
      ]);
      expect(results.map((r) => r.nextExpectedRevision)).toEqual([2, 0, 0]);
      expect((await store.readStream(known)).map((e) => [e.revision, e.type, e.data])).toEqual([
        [0, 'A', {}],
        [1, 'B', { n: 1 }],
        [2, 'B', { n: 2 }],
      ]);
      const log = await store.readAll({ after: head, maxCount: 10 });
      expect(log.map((e) => [e.streamId, e.type])).toEqual([
        [known, 'B'],
        [known, 'B'],
        [fresh, 'C'],
        [other, 'D'],
      ]);
      // Each result is its append's last event's position.
      expect(results.map((r) => r.position)).toEqual([log[1].position, log[2].position, log[3].position]);
      expect((await appendToStream(store, known, [event('E')], 2)).nextExpectedRevision).toBe(3);
    });

    it('refuses a stream named twice, an append without events, or none at all, writing nothing', async () => {
      const [a, b] = [stream('twice-a'), stream('twice-b')];
      await expect(
        store.appendToStreams([
          { streamId: a, events: [event('A')], expected: 'no_stream' },
          { streamId: a, events: [event('B')], expected: 0 },
        ]),
      ).rejects.toThrow(/named twice/);
      await expect(
        store.appendToStreams([
          { streamId: b, events: [event('A')], expected: 'no_stream' },
          { streamId: a, events: [], expected: 'no_stream' },
        ]),
      ).rejects.toThrow(/no events/);
      await expect(store.appendToStreams([])).rejects.toThrow(/at least one/);
      expect([await store.readStream(a), await store.readStream(b)]).toEqual([[], []]);
    });

    it('is one transaction where the store says so: a stream off its expected revision fails them all, naming it', async () => {
      const [ok, behind, fresh] = [stream('all-ok'), stream('all-behind'), stream('all-fresh')];
      await appendToStream(store, ok, [event('A')], 'no_stream');
      await appendToStream(store, behind, [event('A'), event('B')], 'no_stream');
      const head = await store.head();
      const error = await store
        .appendToStreams([
          { streamId: ok, events: [event('C')], expected: 0 },
          { streamId: fresh, events: [event('C')], expected: 'no_stream' },
          { streamId: behind, events: [event('C')], expected: 0 },
        ])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WrongExpectedRevision);
      expect(error).toMatchObject({ streamId: behind, expected: 0, actual: 1 });
      if (!isAtomicAcrossStreams(store)) return;
      expect(await store.readAll({ after: head, maxCount: 10 })).toEqual([]);
      expect(await store.readStream(fresh)).toEqual([]);
      // Nothing of the refused call stands in the way of the next.
      const again = await store.appendToStreams([
        { streamId: ok, events: [event('C')], expected: 0 },
        { streamId: fresh, events: [event('C')], expected: 'no_stream' },
        { streamId: behind, events: [event('C')], expected: 1 },
      ]);
      expect(again.map((r) => r.nextExpectedRevision)).toEqual([1, 0, 2]);
    });

    it('lets exactly one of several concurrent calls sharing a stream win, the others writing nothing anywhere', async () => {
      const shared = stream('shared');
      await appendToStream(store, shared, [event('A')], 'no_stream');
      const own = Array.from({ length: 6 }, (_, i) => stream(`own${i}`));
      const settled = await Promise.allSettled(
        own.map((s, i) =>
          store.appendToStreams([
            { streamId: s, events: [event('Mine', { i })], expected: 'no_stream' },
            { streamId: shared, events: [event('Shared', { i })], expected: 0 },
          ]),
        ),
      );
      expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of settled) if (r.status === 'rejected') expect(r.reason).toMatchObject({ streamId: shared, actual: 1 });
      const sharedEvents = await store.readStream(shared);
      expect(sharedEvents).toHaveLength(2);
      if (!isAtomicAcrossStreams(store)) return;
      const winner = (sharedEvents[1].data as { i: number }).i;
      const written = await Promise.all(own.map((s) => store.readStream(s)));
      expect(written.map((events) => events.length)).toEqual(own.map((_, i) => (i === winner ? 1 : 0)));
    });

    it('lets one of two connections make a new stream both name, the other writing nothing anywhere', async () => {
      if (!run.subject.connectAgain) return;
      const other = await run.subject.connectAgain();
      try {
        for (let round = 0; round < 5; round++) {
          const contested = stream(`contested${round}`);
          const [mine, theirs] = [stream(`mine${round}`), stream(`theirs${round}`)];
          const settled = await Promise.allSettled([
            store.appendToStreams([
              { streamId: mine, events: [event('Mine')], expected: 'no_stream' },
              { streamId: contested, events: [event('First', { by: 'me' })], expected: 'no_stream' },
            ]),
            other.appendToStreams([
              { streamId: theirs, events: [event('Theirs')], expected: 'no_stream' },
              { streamId: contested, events: [event('First', { by: 'them' })], expected: 'no_stream' },
            ]),
          ]);
          expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          const lost = settled.find((r) => r.status === 'rejected') as PromiseRejectedResult;
          expect(lost.reason).toMatchObject({ streamId: contested, actual: 0 });
          const first = await store.readStream(contested);
          expect(first).toHaveLength(1);
          if (!isAtomicAcrossStreams(store)) continue;
          const by = (first[0].data as { by: string }).by;
          expect([(await store.readStream(mine)).length, (await store.readStream(theirs)).length]).toEqual(by === 'me' ? [1, 0] : [0, 1]);
        }
      } finally {
        await other.close();
      }
    });

    it('delivers to a subscription the events of every append, in the order written', async () => {
      const head = await store.head();
      const [a, b] = [stream('sub-a'), stream('sub-b')];
      await store.appendToStreams([
        { streamId: a, events: [event('A1'), event('A2')], expected: 'no_stream' },
        { streamId: b, events: [event('B1')], expected: 'no_stream' },
      ]);
      const seen = await collect(store, head, (events) => events.length >= 3);
      expect(seen.map((e) => [e.streamId, e.type])).toEqual([
        [a, 'A1'],
        [a, 'A2'],
        [b, 'B1'],
      ]);
    });
  });

  it('writes what a holding append decides on the stream as it reads it, and nothing when it decides nothing', async () => {
    const [held, beside] = [stream('held'), stream('beside')];
    await appendToStream(store, held, [event('A')], 'no_stream');
    const results = await appendHolding(store, held, async () => {
      const seen = await store.readStream(held);
      return [
        { streamId: held, events: [event('B', { after: seen.length })], expected: seen.length - 1 },
        { streamId: beside, events: [event('C')], expected: 'no_stream' },
      ];
    });
    expect(results.map((r) => r.nextExpectedRevision)).toEqual([1, 0]);
    expect((await store.readStream(held)).map((e) => e.data)).toEqual([{}, { after: 1 }]);
    expect(await appendHolding(store, held, async () => [])).toEqual([]);
    await expect(appendHolding(store, held, async () => [{ streamId: held, events: [event('D')], expected: 0 }])).rejects.toBeInstanceOf(
      WrongExpectedRevision,
    );
    expect(await store.readStream(held)).toHaveLength(2);
  });
}
