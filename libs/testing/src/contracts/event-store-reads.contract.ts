import { appendToStream, countAfter, countByType, EventStore, readTypes, RecordedEvent } from '@deals/kernel';
import { randomUUID } from 'node:crypto';
import { ContractRun, event, stream } from './event-store-contract-support';

/** The contract's checks of reads: a stream, the log in pages, by type, and counts. */
export function readChecks(run: ContractRun): void {
  let store: EventStore;
  beforeEach(() => (store = run.store));

  it('reads a missing stream as empty', async () => {
    expect(await store.readStream(stream('missing'))).toEqual([]);
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
}
