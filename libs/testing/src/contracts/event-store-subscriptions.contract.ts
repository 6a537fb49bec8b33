import { appendToStream, EventStore, RecordedEvent } from '@deals/kernel';
import { collect, ContractRun, event, stream } from './event-store-contract-support';

/** The contract's checks of subscriptions: history then live events, other connections' appends, one batch at a time. */
export function subscriptionChecks(run: ContractRun): void {
  let store: EventStore;
  beforeEach(() => (store = run.store));

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
    if (!run.subject.connectAgain) return;
    const other = await run.subject.connectAgain();
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
    if (!run.subject.connectAgain) return;
    const other = await run.subject.connectAgain();
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
}
