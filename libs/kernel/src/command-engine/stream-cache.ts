import { DomainEvent, SnapshotCodec, SnapshottedDecider } from '../decider';
import { snapshotsOf } from '../ports/event-store.capabilities';
import { EventStore, LogPosition, RecordedEvent, StreamRevision } from '../ports/event-store.port';
import { RecentMap } from '../recent-map';

const CACHED_STREAMS = 10_000;

/** A decider as the cache sees it: its commands do not matter here. */
export type AnyDecider<S> = SnapshottedDecider<S, never, DomainEvent>;

/**
 * A stream's fold as the cache keeps it. `snapshotAt`: the revision of the stream's latest snapshot
 * this state knows of (loaded or saved), or null; once there is one, the state holds only the keyed
 * entries added since (or looked up), the others are in the snapshot store.
 */
export interface Cached {
  decider: unknown;
  state: unknown;
  revision: StreamRevision;
  snapshotAt: StreamRevision | null;
  /** Log position of the event at `revision`. */
  position: LogPosition;
}

/** A stream's state as `current` found it; `lastEventId`: the id of the event at `revision`, when it was read. */
export interface Folded<S> {
  state: S;
  revision: StreamRevision | null;
  snapshotAt: StreamRevision | null;
  verified: boolean;
  lastEventId: string | null;
  /** Log position of the event at `revision` (null for a stream without events). */
  position: LogPosition | null;
}

const caches = new WeakMap<EventStore, StreamCache>();

/**
 * Folded state of recently handled streams, of one store: the next command on a stream reads only
 * the events after the cached revision. Another process's appends are simply the newer events read
 * next time.
 */
export class StreamCache {
  /** The cache of `store`, one per store. */
  static of(store: EventStore): StreamCache {
    let cache = caches.get(store);
    if (!cache) caches.set(store, (cache = new StreamCache(store)));
    return cache;
  }

  private readonly folds = new RecentMap<string, Cached>(CACHED_STREAMS);

  private constructor(private readonly store: EventStore) {}

  /**
   * The stream's state: the cached fold as it is (`verified: false`: another process may have
   * appended since), the empty stream when it is fresh and not cached (`verified: false` too), or
   * the events after the cached fold (or the latest snapshot) read and folded (`verified: true`).
   */
  async current<S, E extends DomainEvent>(
    streamId: string,
    decider: AnyDecider<S>,
    trust: { cache: boolean; fresh: boolean },
  ): Promise<Folded<S>> {
    const cached = this.folds.get(streamId);
    let base = cached && cached.decider === decider ? cached : null;
    if (base && trust.cache)
      return {
        state: base.state as S,
        revision: base.revision,
        snapshotAt: base.snapshotAt,
        verified: false,
        lastEventId: null,
        position: base.position,
      };
    if (!cached && trust.cache && trust.fresh)
      return { state: decider.initialState(), revision: null, snapshotAt: null, verified: false, lastEventId: null, position: null };
    let newer: RecordedEvent[] | null = null;
    if (!base) {
      const snapshot = await this.fromSnapshot(streamId, decider);
      if (snapshot) ({ base, newer } = snapshot);
    }
    newer ??= await this.store.readStream(streamId, base ? base.revision + 1 : 0);
    let state = base ? (base.state as S) : decider.initialState();
    for (const event of newer as unknown as E[]) state = decider.evolve(state, event);
    const revision = newer.length ? newer[newer.length - 1].revision : base ? base.revision : null;
    const lastEventId = newer.length ? newer[newer.length - 1].id : null;
    const position = newer.length ? newer[newer.length - 1].position : (base?.position ?? null);
    return { state, revision, snapshotAt: base?.snapshotAt ?? null, verified: true, lastEventId, position };
  }

  /**
   * Keeps the fold for the stream's next command, first saving a snapshot of it when the stream has
   * grown by the codec's `every` events since the last one (and then keeping it without the keyed
   * entries the snapshot saved). `eventId` is the id of the event at `revision`. A snapshot that
   * cannot be saved is tried again after the next append; the fold is kept whole meanwhile.
   */
  async remember(streamId: string, entry: Cached, eventId: string | null): Promise<Cached> {
    const codec = (entry.decider as AnyDecider<unknown>).snapshot;
    const snapshots = snapshotsOf(this.store);
    if (codec && snapshots && eventId !== null && entry.revision - (entry.snapshotAt ?? -1) >= codec.every) {
      try {
        const entries = codec.keyed?.entries(entry.state) ?? [];
        const snapshot = { revision: entry.revision, eventId, state: codec.toJson(entry.state) };
        await snapshots.save(streamId, codec.shape, snapshot, entries);
        entry = {
          ...entry,
          state: codec.keyed ? codec.keyed.withoutEntries(entry.state) : entry.state,
          snapshotAt: entry.revision,
        };
      } catch {
        // Only a cache: the fold stays whole in memory, and the next append tries again.
      }
    }
    // Never back: a fold read before another batch of this process appended is older than what that batch kept.
    const kept = this.folds.get(streamId);
    if (!kept || kept.decider !== entry.decider || kept.revision <= entry.revision) this.folds.set(streamId, entry);
    return entry;
  }

  /**
   * The state with the keyed entries of `keys`, where it may not hold them (it rests on a snapshot):
   * looked up in the snapshot store as of the state's revision.
   */
  async withEntries<S>(
    streamId: string,
    codec: SnapshotCodec<S> | undefined,
    at: { state: S; revision: StreamRevision | null; snapshotAt: StreamRevision | null },
    keys: Iterable<string>,
  ): Promise<S> {
    const keyed = codec?.keyed;
    const snapshots = snapshotsOf(this.store);
    if (!codec || !keyed || !snapshots || at.snapshotAt === null || at.revision === null) return at.state;
    const missing = new Set<string>();
    for (const key of keys) if (!keyed.has(at.state, key)) missing.add(key);
    if (!missing.size) return at.state;
    const found = await snapshots.lookup(streamId, codec.shape, [...missing], at.revision);
    return found.length ? keyed.withEntries(at.state, found) : at.state;
  }

  /**
   * The stream's latest snapshot, if the decider has a codec and the store keeps snapshots, and the
   * log holds the event it was taken at (a log restored from an older copy does not: the stream's
   * snapshots are then forgotten). With the events after it, already read.
   */
  private async fromSnapshot<S>(streamId: string, decider: AnyDecider<S>): Promise<{ base: Cached; newer: RecordedEvent[] } | null> {
    const codec = decider.snapshot;
    const snapshots = snapshotsOf(this.store);
    if (!codec || !snapshots) return null;
    const snapshot = await snapshots.load(streamId, codec.shape);
    if (!snapshot) return null;
    const from = await this.store.readStream(streamId, snapshot.revision);
    if (from.length === 0 || from[0].id !== snapshot.eventId) {
      await snapshots.forget(streamId);
      return null;
    }
    const base = {
      decider,
      state: codec.fromJson(snapshot.state),
      revision: snapshot.revision,
      snapshotAt: snapshot.revision,
      position: from[0].position,
    };
    return { base, newer: from.slice(1) };
  }
}
