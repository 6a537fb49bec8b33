import {
  appendHolding,
  appendToStream,
  countAfter,
  countByType,
  EventStore,
  isAtomicAcrossStreams,
  NewEvent,
  readTypes,
  RecordedEvent,
  WrongExpectedRevision,
} from '@deals/kernel';
import { randomUUID } from 'node:crypto';

export interface EventStoreUnderTest {
  store: EventStore;
  /** A second, independent connection to the same log (another process in production). */
  connectAgain?: () => Promise<EventStore>;
  cleanup: () => Promise<void>;
}

const event = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { occurredAt: '2026-01-01T00:00:00.000Z', partnerId: 'p1', actor: 'operator', requestId: 'r1' },
});

/** How long a delivery may take before it counts as hung: the caller's assertion then fails on what came. */
const HUNG_MS = 20_000;

async function collect(store: EventStore, after: string | null, until: (events: RecordedEvent[]) => boolean, ms = HUNG_MS) {
  const seen: RecordedEvent[] = [];
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const subscription = store.subscribe({
    after,
    onEvents: async (events) => {
      seen.push(...events);
      if (until(seen)) done();
    },
  });
  const timer = setTimeout(done, ms);
  await finished;
  clearTimeout(timer);
  await subscription.close();
  return seen;
}

/**
 * What every EventStore adapter promises (ports/event-store.port.ts). Streams are named per run,
 * and log-wide checks start from the head, so the suite can share a server with other data.
 */
export function eventStoreContract(name: string, open: () => Promise<EventStoreUnderTest>): void {
  describe(`EventStore contract: ${name}`, () => {
    let subject: EventStoreUnderTest;
    let store: EventStore;
    const stream = (label: string) => `contract${label}-${randomUUID().replace(/-/g, '')}`;

    beforeEach(async () => {
      subject = await open();
      store = subject.store;
    });
    afterEach(async () => subject.cleanup());

    it('reads a missing stream as empty', async () => {
      expect(await store.readStream(stream('missing'))).toEqual([]);
    });

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

    it('counts the events after a position, up to a limit, as reading them would', async () => {
      const head = await store.head();
      const s = stream('count');
      const { position: second } = await appendToStream(
        store,
        s,
        [event('ThingHappened', { n: 1 }), event('ThingHappened', { n: 2 })],
        'no_stream',
      );
      await appendToStream(store, s, [event('ThingHappened', { n: 3 })], 1);
      expect(await countAfter(store, head)).toBe(3);
      expect(await countAfter(store, head, 2)).toBe(2);
      expect(await countAfter(store, second)).toBe(1);
      expect(await countAfter(store, await store.head())).toBe(0);
      const all = await countAfter(store, null);
      expect(all).toBeGreaterThanOrEqual(3);
      expect(all).toBe((await store.readAll({ after: null, maxCount: all + 10 })).length);
    });

    it('reads a stream from a revision', async () => {
      const s = stream('from');
      await appendToStream(store, s, [event('A'), event('B'), event('C')], 'no_stream');
      expect((await store.readStream(s, 1)).map((e) => [e.revision, e.type])).toEqual([
        [1, 'B'],
        [2, 'C'],
      ]);
      expect(await store.readStream(s, 3)).toEqual([]);
      expect((await store.readStream(s, 0)).map((e) => e.type)).toEqual(['A', 'B', 'C']);
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
        if (!subject.connectAgain) return;
        const other = await subject.connectAgain();
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

    it('pages through the whole log after a position, exclusively and without overlap', async () => {
      const start = await store.head();
      const s = stream('page');
      for (let i = 0; i < 7; i++) await appendToStream(store, s, [event('Paged', { i })], i === 0 ? 'no_stream' : i - 1);
      const seen: RecordedEvent[] = [];
      let after = start;
      for (;;) {
        const page = await store.readAll({ after, maxCount: 3 });
        if (page.length === 0) break;
        seen.push(...page);
        after = page[page.length - 1].position;
      }
      const mine = seen.filter((e) => e.streamId === s);
      expect(mine.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      expect(new Set(seen.map((e) => e.position)).size).toBe(seen.length);
      if (start !== null) expect(seen.every((e) => e.position > start)).toBe(true);
      expect(await store.head()).toBe(mine[mine.length - 1].position);
    });

    it('reads the events of some types in pages, and through how far of the log each page went', async () => {
      const start = await store.head();
      const s = stream('types');
      const tag = randomUUID().replace(/-/g, '').slice(0, 12);
      const [wanted, other] = [`Wanted${tag}`, `Other${tag}`];
      const kinds = [wanted, other, other, wanted, other, wanted, wanted, other];
      for (let i = 0; i < kinds.length; i++) await appendToStream(store, s, [event(kinds[i], { i })], i === 0 ? 'no_stream' : i - 1);
      const all = await store.readAll({ after: start, maxCount: 100 });
      const seen: RecordedEvent[] = [];
      const throughs: Array<string | null> = [];
      let after = start;
      for (;;) {
        const page = await readTypes(store, { after, maxCount: 3, types: [wanted] });
        expect(page.events.every((e) => e.type === wanted)).toBe(true);
        if (page.events.length === 3) expect(page.through).toBe(page.events[2].position);
        if (page.through === after) break;
        seen.push(...page.events);
        throughs.push(page.through);
        after = page.through;
      }
      expect(seen.map((e) => (e.data as { i: number }).i)).toEqual([0, 3, 5, 6]);
      // The last page, not full, went through the end of the log: the last event of the other type too.
      expect(throughs[throughs.length - 1]).toBe(all[all.length - 1].position);
      expect(await readTypes(store, { after: await store.head(), maxCount: 3, types: [wanted] })).toEqual({
        events: [],
        through: await store.head(),
      });
      expect(await readTypes(store, { after: start, maxCount: 10, types: [`None${tag}`] })).toEqual({
        events: [],
        through: all[all.length - 1].position,
      });
    });

    it('counts the events of each type', async () => {
      const tag = randomUUID().replace(/-/g, '').slice(0, 12);
      const s = stream('bytype');
      await appendToStream(store, s, [event(`One${tag}`), event(`Two${tag}`), event(`Two${tag}`)], 'no_stream');
      const counts = await countByType(store);
      expect([counts.get(`One${tag}`), counts.get(`Two${tag}`), counts.get(`Three${tag}`)]).toEqual([1, 2, undefined]);
    });

    it('subscribes from a position: history after it, then live events, in order', async () => {
      const s = stream('sub');
      await appendToStream(store, s, [event('Before')], 'no_stream');
      const from = await store.head();
      await appendToStream(store, s, [event('History', { i: 1 })], 0);
      let heardHistory!: () => void;
      const history = new Promise<void>((resolve) => (heardHistory = resolve));
      const seenPromise = collect(store, from, (seen) => {
        if (seen.some((e) => e.streamId === s)) heardHistory();
        return seen.filter((e) => e.streamId === s).length >= 3;
      });
      // Live once the history has been delivered.
      await history;
      await appendToStream(store, s, [event('Live', { i: 2 }), event('Live', { i: 3 })], 1);
      const seen = (await seenPromise).filter((e) => e.streamId === s);
      expect(seen.map((e) => e.type)).toEqual(['History', 'Live', 'Live']);
      expect(seen.map((e) => e.revision)).toEqual([1, 2, 3]);
    });

    it('delivers to a subscription what another connection appends', async () => {
      if (!subject.connectAgain) return;
      const other = await subject.connectAgain();
      try {
        const s = stream('other');
        const from = await store.head();
        const seenPromise = collect(store, from, (seen) => seen.some((e) => e.streamId === s));
        await appendToStream(other, s, [event('FromElsewhere')], 'no_stream');
        const seen = await seenPromise;
        expect(seen.filter((e) => e.streamId === s).map((e) => e.type)).toEqual(['FromElsewhere']);
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(['FromElsewhere']);
      } finally {
        await other.close();
      }
    });

    it('delivers the whole log in order when appends of two connections interleave', async () => {
      if (!subject.connectAgain) return;
      const other = await subject.connectAgain();
      try {
        const [mine, theirs] = [stream('mine'), stream('theirs')];
        const from = await store.head();
        const ours = (e: RecordedEvent) => e.streamId === mine || e.streamId === theirs;
        const seenPromise = collect(store, from, (seen) => seen.filter(ours).length >= 8);
        // This connection's appends leave gaps that only the other's fill.
        for (let i = 0; i < 4; i++) {
          await appendToStream(store, mine, [event('Mine', { i })], i === 0 ? 'no_stream' : i - 1);
          await appendToStream(other, theirs, [event('Theirs', { i })], i === 0 ? 'no_stream' : i - 1);
        }
        const seen = (await seenPromise).filter(ours);
        expect(seen.map((e) => `${e.type}${(e.data as { i: number }).i}`)).toEqual([
          'Mine0',
          'Theirs0',
          'Mine1',
          'Theirs1',
          'Mine2',
          'Theirs2',
          'Mine3',
          'Theirs3',
        ]);
        expect(seen.map((e) => e.position)).toEqual([...seen.map((e) => e.position)].sort());
        expect(seen.map((e) => e.position)).toEqual(
          (await store.readAll({ after: from, maxCount: 100 })).filter(ours).map((e) => e.position),
        );
      } finally {
        await other.close();
      }
    });

    it('waits for each batch handler before delivering the next', async () => {
      const s = stream('serial');
      const from = await store.head();
      for (let i = 0; i < 5; i++) await appendToStream(store, s, [event('Serial', { i })], i === 0 ? 'no_stream' : i - 1);
      let running = 0;
      let overlapped = false;
      const seen = await (async () => {
        const got: RecordedEvent[] = [];
        let done!: () => void;
        const finished = new Promise<void>((r) => (done = r));
        const sub = store.subscribe({
          after: from,
          onEvents: async (events) => {
            running++;
            if (running > 1) overlapped = true;
            await new Promise((r) => setTimeout(r, 5));
            got.push(...events);
            running--;
            if (got.filter((e) => e.streamId === s).length >= 5) done();
          },
        });
        await finished;
        await sub.close();
        return got;
      })();
      expect(overlapped).toBe(false);
      expect(seen.filter((e) => e.streamId === s).map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4]);
    });

    it('answers a ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
