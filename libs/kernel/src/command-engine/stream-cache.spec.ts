import { MemoryEventStore, MemoryLog } from '@deals/testing';
import { randomUUID } from 'node:crypto';
import { SnapshottedDecider } from '../decider';
import { NewEvent } from '../ports/event-store.port';
import { SnapshotStore, StoredSnapshot } from '../ports/snapshot-store.port';
import { StreamCache } from './stream-cache';

type Log = MemoryLog;

/** Enough of an event store for the cache: append (unchecked) and read a stream. */
class MemoryStore extends MemoryEventStore {
  constructor(log: Log = { streams: new Map(), last: 0 }, snapshots: SnapshotStore | null = null) {
    super(log, snapshots, false);
  }
}

/** Snapshots in memory (one shape), keyed entries with the revision they were saved at. */
class MemorySnapshots extends SnapshotStore {
  readonly saved = new Map<string, StoredSnapshot>();
  readonly entries = new Map<string, Map<string, { revision: number; value: unknown }>>();
  readonly lookups: string[][] = [];

  async load(streamId: string): Promise<StoredSnapshot | null> {
    return this.saved.get(streamId) ?? null;
  }
  async save(streamId: string, _shape: string, snapshot: StoredSnapshot, entries: ReadonlyArray<readonly [string, unknown]>) {
    if ((this.saved.get(streamId)?.revision ?? -1) < snapshot.revision) this.saved.set(streamId, snapshot);
    const kept = this.entries.get(streamId) ?? new Map();
    this.entries.set(streamId, kept);
    for (const [key, value] of entries) if (!kept.has(key)) kept.set(key, { revision: snapshot.revision, value });
  }
  async lookup(streamId: string, _shape: string, keys: readonly string[], atRevision: number): Promise<Array<[string, unknown]>> {
    this.lookups.push([...keys]);
    const kept = this.entries.get(streamId);
    return keys.flatMap((key) => {
      const entry = kept?.get(key);
      return entry && entry.revision <= atRevision ? [[key, entry.value] as [string, unknown]] : [];
    });
  }
  async forget(streamId: string) {
    this.saved.delete(streamId);
    this.entries.delete(streamId);
  }
  async close() {}
}

/** A tally of tags: `count` in the snapshot's body, each tag's count a keyed entry. */
type Tally = { count: number; tags: Map<string, number> };
type Tagged = { type: 'Tagged'; data: { tag: string } };
type Tag = { type: 'Tag'; data: { tag: string } };
const tally: SnapshottedDecider<Tally, Tag, Tagged> = {
  initialState: () => ({ count: 0, tags: new Map() }),
  decide: (command) => [{ type: 'Tagged', data: command.data }],
  evolve: ({ count, tags }, { data: { tag } }) => ({ count: count + 1, tags: new Map(tags).set(tag, (tags.get(tag) ?? 0) + 1) }),
  snapshot: {
    shape: 'tally/1',
    every: 3,
    toJson: ({ count }) => ({ count }),
    fromJson: (json) => ({ count: (json as { count: number }).count, tags: new Map() }),
    keyed: {
      keysOf: (command) => [(command as Tag).data.tag],
      has: (state, key) => state.tags.has(key),
      entries: (state) => [...state.tags],
      withEntries: (state, entries) => ({ ...state, tags: new Map([...state.tags, ...(entries as Array<[string, number]>)]) }),
      withoutEntries: (state) => ({ ...state, tags: new Map() }),
    },
  },
};
const { snapshot: _codec, ...plainTally } = tally;

const tagged = (...tags: string[]): NewEvent[] =>
  tags.map((tag) => ({ id: randomUUID(), type: 'Tagged', data: { tag }, metadata: { occurredAt: '2026-01-01T00:00:00.000Z' } }));

/** Reads the stream as `handleCommand` does when it does not trust the cache, and keeps the fold. */
async function readAndRemember(cache: StreamCache, streamId: string, decider = tally) {
  const found = await cache.current(streamId, decider, { cache: false, fresh: false });
  const { revision, position, snapshotAt, state } = found;
  if (revision === null || position === null) return { found, kept: null };
  return { found, kept: await cache.remember(streamId, { decider, state, revision, snapshotAt, position }, found.lastEventId) };
}

describe('the stream cache', () => {
  it("reuses a stream's fold, reading only the events after it, and trusts it as it is only when told", async () => {
    const store = new MemoryStore();
    const cache = StreamCache.of(store);
    expect(StreamCache.of(store)).toBe(cache);
    await store.append('t-1', tagged('a', 'b'), 'any');
    await readAndRemember(cache, 't-1', plainTally);
    // Another process appends behind the cache's back.
    await store.append('t-1', tagged('c'), 'any');
    const reads = jest.spyOn(store, 'readStream');
    const trusted = await cache.current('t-1', plainTally, { cache: true, fresh: false });
    expect(trusted).toMatchObject({ state: { count: 2 }, revision: 1, verified: false, lastEventId: null });
    expect(reads).not.toHaveBeenCalled();
    const read = await cache.current('t-1', plainTally, { cache: false, fresh: false });
    expect(reads.mock.calls).toEqual([['t-1', 2]]);
    const last = store.log.streams.get('t-1')![2];
    expect(read).toMatchObject({ state: { count: 3 }, revision: 2, verified: true, lastEventId: last.id, position: last.position });
    // Another decider on the same stream does not get this one's fold.
    const other = { ...plainTally };
    expect(await cache.current('t-1', other, { cache: true, fresh: false })).toMatchObject({ state: { count: 3 }, verified: true });
    expect(reads.mock.calls[1]).toEqual(['t-1', 0]);
  });

  it('gives a fresh stream it does not hold as empty without reading it, and reads a stream without events as empty', async () => {
    const store = new MemoryStore();
    const cache = StreamCache.of(store);
    const reads = jest.spyOn(store, 'readStream');
    expect(await cache.current('t-2', tally, { cache: true, fresh: true })).toEqual({
      state: { count: 0, tags: new Map() },
      revision: null,
      snapshotAt: null,
      verified: false,
      lastEventId: null,
      position: null,
    });
    expect(reads).not.toHaveBeenCalled();
    expect(await cache.current('t-2', tally, { cache: true, fresh: false })).toMatchObject({
      revision: null,
      verified: true,
      position: null,
    });
  });

  it('saves a snapshot once the stream has grown by `every` events, keeping the fold without its keyed entries', async () => {
    const snapshots = new MemorySnapshots();
    const store = new MemoryStore(undefined, snapshots);
    const cache = StreamCache.of(store);
    await store.append('t-3', tagged('a', 'b'), 'any');
    expect((await readAndRemember(cache, 't-3')).kept).toMatchObject({ snapshotAt: null, state: { count: 2 } });
    expect(snapshots.saved.size).toBe(0);
    await store.append('t-3', tagged('a'), 'any');
    const { kept } = await readAndRemember(cache, 't-3');
    const [, , third] = store.log.streams.get('t-3')!;
    expect(snapshots.saved.get('t-3')).toEqual({ revision: 2, eventId: third.id, state: { count: 3 } });
    expect(kept).toMatchObject({ revision: 2, snapshotAt: 2, state: { count: 3, tags: new Map() } });
    expect(await cache.current('t-3', tally, { cache: true, fresh: false })).toMatchObject({ snapshotAt: 2, state: { tags: new Map() } });
    // The next one is due `every` events later.
    await store.append('t-3', tagged('c', 'c'), 'any');
    expect((await readAndRemember(cache, 't-3')).kept).toMatchObject({ snapshotAt: 2, state: { tags: new Map([['c', 2]]) } });
  });

  it("looks up the keyed entries a command reads, as of the fold's revision, only where the fold does not hold them", async () => {
    const snapshots = new MemorySnapshots();
    const store = new MemoryStore(undefined, snapshots);
    const cache = StreamCache.of(store);
    await store.append('t-4', tagged('a', 'b', 'a'), 'any');
    const { kept } = await readAndRemember(cache, 't-4');
    await store.append('t-4', tagged('c'), 'any');
    const { found } = await readAndRemember(cache, 't-4');
    const at = { state: found.state, revision: found.revision, snapshotAt: found.snapshotAt };
    expect(kept!.state).toEqual({ count: 3, tags: new Map() });
    const state = await cache.withEntries('t-4', tally.snapshot, at, ['a', 'c', 'never']);
    expect(snapshots.lookups).toEqual([['a', 'never']]);
    expect(state).toEqual({
      count: 4,
      tags: new Map([
        ['c', 1],
        ['a', 2],
      ]),
    });
    // Nothing missing, nothing looked up; a fold that rests on no snapshot holds every entry.
    expect(await cache.withEntries('t-4', tally.snapshot, at, ['c'])).toBe(found.state);
    expect(await cache.withEntries('t-4', tally.snapshot, { ...at, snapshotAt: null }, ['a'])).toBe(found.state);
    expect(snapshots.lookups).toHaveLength(1);
  });

  it('starts a process from the latest snapshot, reading only the events from it on', async () => {
    const snapshots = new MemorySnapshots();
    const first = new MemoryStore(undefined, snapshots);
    await first.append('t-5', tagged('a', 'b', 'c', 'd'), 'any');
    await readAndRemember(StreamCache.of(first), 't-5');
    await first.append('t-5', tagged('e'), 'any');
    const restarted = new MemoryStore(first.log, snapshots);
    const reads = jest.spyOn(restarted, 'readStream');
    const { found } = await readAndRemember(StreamCache.of(restarted), 't-5');
    expect(reads.mock.calls).toEqual([['t-5', 3]]);
    expect(found).toMatchObject({ state: { count: 5, tags: new Map([['e', 1]]) }, revision: 4, snapshotAt: 3, verified: true });
  });

  it('forgets a snapshot whose event the log does not hold, and folds the whole stream', async () => {
    const snapshots = new MemorySnapshots();
    const first = new MemoryStore(undefined, snapshots);
    await first.append('t-6', tagged('a', 'b', 'c'), 'any');
    await readAndRemember(StreamCache.of(first), 't-6');
    expect(snapshots.saved.has('t-6')).toBe(true);
    // The log restored from an older copy, written again since: other events at those revisions.
    const restored = new MemoryStore(undefined, snapshots);
    await restored.append('t-6', tagged('x', 'y', 'z', 'w'), 'any');
    const forget = jest.spyOn(snapshots, 'forget');
    const { found } = await readAndRemember(StreamCache.of(restored), 't-6');
    expect(forget).toHaveBeenCalledWith('t-6');
    expect(found).toMatchObject({
      state: {
        count: 4,
        tags: new Map([
          ['x', 1],
          ['y', 1],
          ['z', 1],
          ['w', 1],
        ]),
      },
      revision: 3,
      snapshotAt: null,
    });
    // The fold is then kept with a snapshot of its own.
    expect(snapshots.saved.get('t-6')).toEqual({ revision: 3, eventId: restored.log.streams.get('t-6')![3].id, state: { count: 4 } });
  });

  it('keeps the fold whole when a snapshot cannot be saved, and tries again with the next one', async () => {
    const snapshots = new MemorySnapshots();
    const store = new MemoryStore(undefined, snapshots);
    const cache = StreamCache.of(store);
    const save = jest.spyOn(snapshots, 'save').mockRejectedValueOnce(new Error('disk full'));
    await store.append('t-7', tagged('a', 'b', 'c'), 'any');
    expect((await readAndRemember(cache, 't-7')).kept).toMatchObject({
      snapshotAt: null,
      state: {
        tags: new Map([
          ['a', 1],
          ['b', 1],
          ['c', 1],
        ]),
      },
    });
    await store.append('t-7', tagged('d'), 'any');
    expect((await readAndRemember(cache, 't-7')).kept).toMatchObject({ snapshotAt: 3, state: { count: 4, tags: new Map() } });
    expect(save).toHaveBeenCalledTimes(2);
  });
});
