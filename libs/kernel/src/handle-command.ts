import { randomUUID } from 'node:crypto';
import { Decider, DomainCommand, DomainEvent, fold, SnapshotCodec, SnapshottedDecider } from './decider';
import { RecentMap } from './recent-map';
import type { RequestWrites } from './read-your-writes';
import {
  EventMetadata,
  EventStore,
  LogPosition,
  NewEvent,
  RecordedEvent,
  StreamRevision,
  WrongExpectedRevision,
} from './ports/event-store.port';

/**
 * Who asks, and when: everything a command needs from outside the domain. A context given to
 * `handleCommand` may be given again (its commands' events then share one metadata object), and
 * its `now` may be replaced, but the caller object (`metadata`) is not changed in place once given:
 * give a new object instead.
 */
export interface CommandContext {
  now: Date;
  /** `writes`: the request's tracker, told each append (never in the events' metadata). */
  metadata: Omit<EventMetadata, 'occurredAt'> & { writes?: RequestWrites };
}

export interface CommandOutcome<S, E> {
  /** Events appended by this command (empty when the decider had nothing to say). */
  events: E[];
  /** State after the new events. */
  state: S;
  /** Stream revision after the command, or null for a stream that still does not exist. */
  revision: StreamRevision | null;
  /**
   * Log position of the last event its batch appended (see handleCommand); when the batch appended
   * nothing, of the stream's last event, which the outcome rests on (perhaps another process's,
   * not yet in the views: a caller waits for it as for its own); null for a stream without events.
   */
  position: LogPosition | null;
}

const MAX_ATTEMPTS = 12;
const CACHED_STREAMS = 10_000;
/** Commands decided together and appended in one write, at most. */
const MAX_BATCH = 256;

/**
 * Folded state of recently handled streams, per store: the next command on a stream reads only the
 * events after the cached revision. Another process's appends are simply the newer events read
 * next time. `snapshotAt`: the revision of the stream's latest snapshot this state knows of (loaded
 * or saved), or null; once there is one, the state holds only the keyed entries added since (or
 * looked up), the others are in the snapshot store.
 */
interface Cached {
  decider: unknown;
  state: unknown;
  revision: StreamRevision;
  snapshotAt: StreamRevision | null;
  /** Log position of the event at `revision`. */
  position: LogPosition;
}
const caches = new WeakMap<EventStore, RecentMap<string, Cached>>();

function cacheFor(store: EventStore): RecentMap<string, Cached> {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new RecentMap(CACHED_STREAMS)));
  return cache;
}

/** Options of {@link handleCommand}. */
export interface HandleOptions {
  /**
   * The stream's id was drawn a moment ago for this command (a new purchase, its coupons): decide
   * on the empty stream without reading it first. The append expects no stream, so if the stream
   * exists after all (a retry after a crash) it is refused and the batch decided again on a read.
   */
  freshStream?: boolean;
}

type AnyDecider<S> = SnapshottedDecider<S, never, DomainEvent>;

/**
 * The stream's latest snapshot, if the decider has a codec and the store keeps snapshots, and the
 * log holds the event it was taken at (a log restored from an older copy does not: the stream's
 * snapshots are then forgotten). With the events after it, already read.
 */
async function fromSnapshot<S>(
  store: EventStore,
  streamId: string,
  decider: AnyDecider<S>,
): Promise<{ base: Cached; newer: RecordedEvent[] } | null> {
  const codec = decider.snapshot;
  if (!codec || !store.snapshots) return null;
  const snapshot = await store.snapshots.load(streamId, codec.shape);
  if (!snapshot) return null;
  const from = await store.readStream(streamId, snapshot.revision);
  if (from.length === 0 || from[0].id !== snapshot.eventId) {
    await store.snapshots.forget(streamId);
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

/** A stream's state as `current` found it; `lastEventId`: the id of the event at `revision`, when it was read. */
interface Folded<S> {
  state: S;
  revision: StreamRevision | null;
  snapshotAt: StreamRevision | null;
  verified: boolean;
  lastEventId: string | null;
  /** Log position of the event at `revision` (null for a stream without events). */
  position: LogPosition | null;
}

/**
 * The stream's state: the cached fold as it is (`verified: false`: another process may have
 * appended since), the empty stream when it is fresh and not cached (`verified: false` too), or
 * the events after the cached fold (or the latest snapshot) read and folded (`verified: true`).
 */
async function current<S, E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: AnyDecider<S>,
  trust: { cache: boolean; fresh: boolean },
): Promise<Folded<S>> {
  const cached = cacheFor(store).get(streamId);
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
    const snapshot = await fromSnapshot(store, streamId, decider);
    if (snapshot) ({ base, newer } = snapshot);
  }
  newer ??= await store.readStream(streamId, base ? base.revision + 1 : 0);
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
async function remember(store: EventStore, streamId: string, entry: Cached, eventId: string | null): Promise<Cached> {
  const codec = (entry.decider as AnyDecider<unknown>).snapshot;
  if (codec && store.snapshots && eventId !== null && entry.revision - (entry.snapshotAt ?? -1) >= codec.every) {
    try {
      const entries = codec.keyed?.entries(entry.state) ?? [];
      await store.snapshots.save(streamId, codec.shape, { revision: entry.revision, eventId, state: codec.toJson(entry.state) }, entries);
      entry = {
        ...entry,
        state: codec.keyed ? codec.keyed.withoutEntries(entry.state) : entry.state,
        snapshotAt: entry.revision,
      };
    } catch {
      // Only a cache: the fold stays whole in memory, and the next append tries again.
    }
  }
  cacheFor(store).set(streamId, entry);
  return entry;
}

/**
 * The state with the keyed entries of `keys`, where it may not hold them (it rests on a snapshot):
 * looked up in the snapshot store as of the state's revision.
 */
async function withEntries<S>(
  store: EventStore,
  streamId: string,
  codec: SnapshotCodec<S> | undefined,
  at: { state: S; revision: StreamRevision | null; snapshotAt: StreamRevision | null },
  keys: Iterable<string>,
): Promise<S> {
  const keyed = codec?.keyed;
  if (!codec || !keyed || !store.snapshots || at.snapshotAt === null || at.revision === null) return at.state;
  const missing = new Set<string>();
  for (const key of keys) if (!keyed.has(at.state, key)) missing.add(key);
  if (!missing.size) return at.state;
  const found = await store.snapshots.lookup(streamId, codec.shape, [...missing], at.revision);
  return found.length ? keyed.withEntries(at.state, found) : at.state;
}

/**
 * The events' metadata of a command context: the fields of `EventMetadata` the caller gave, and the
 * time. Copied field by field (an object spread of the caller took microseconds a command on the
 * purchase path), which also keeps anything else a caller object carries out of the log.
 */
function metadataFrom({ metadata: m, now }: CommandContext): EventMetadata {
  const metadata: EventMetadata = { occurredAt: now.toISOString() };
  if (m.partnerId !== undefined) metadata.partnerId = m.partnerId;
  if (m.actor !== undefined) metadata.actor = m.actor;
  if (m.requestId !== undefined) metadata.requestId = m.requestId;
  if (m.correlationId !== undefined) metadata.correlationId = m.correlationId;
  if (m.causationId !== undefined) metadata.causationId = m.causationId;
  return metadata;
}

/**
 * Contexts seen lately, with the metadata made for them (a bound, not a cache to keep: cleared
 * when full). A purchase uses three contexts; the bench's 50 purchases in flight, ~150.
 */
const RECENT_CONTEXTS = 1024;
const recentContexts = new Map<CommandContext, { time: number; given: CommandContext['metadata']; metadata: EventMetadata }>();

/**
 * The events' metadata of a command context (`metadataFrom`): one object for all the commands
 * given the same context, while its time and caller object are the same ones (a caller's fields are
 * not changed once given). A purchase sends up to three commands with one context at once; their
 * events then share one metadata object, which the event store may encode once for them all.
 */
function metadataOf(context: CommandContext): EventMetadata {
  const known = recentContexts.get(context);
  const time = context.now.getTime();
  if (known && known.time === time && known.given === context.metadata) return known.metadata;
  const metadata = metadataFrom(context);
  if (recentContexts.size >= RECENT_CONTEXTS) recentContexts.clear();
  recentContexts.set(context, { time, given: context.metadata, metadata });
  return metadata;
}

const backOff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));

/** A command waiting for its stream's next write. */
interface Waiting {
  decider: Decider<unknown, DomainCommand, DomainEvent>;
  command: DomainCommand;
  context: CommandContext;
  fresh: boolean;
  resolve: (outcome: CommandOutcome<unknown, DomainEvent>) => void;
  reject: (error: unknown) => void;
}

/** The commands waiting on each stream of a store; a stream is in the map while it is being written. */
const lanes = new WeakMap<EventStore, Map<string, Waiting[]>>();

/**
 * Loads a stream, folds it, decides, and appends with the expected revision. Domain errors from
 * `decide` propagate unchanged; a conflict with another process reloads and decides again, with
 * jittered back-off.
 *
 * Inside a process, commands on one stream are decided one after the other, each against the state
 * its predecessors leave, and the commands that arrived while the stream's previous write was in
 * flight go out together as one append (one expected revision, atomic): a hot stream takes as many
 * commands per disk commit as are waiting, instead of one. A command's outcome is settled only once
 * its batch is written, so a refusal is never reported against a state that did not become true;
 * if the append conflicts, the whole batch is decided again. The position a command reports is its
 * batch's last (as late or later than its own events: what read-your-writes needs); a command that
 * appended reports it to its caller's `writes` too, if the caller carries the request's tracker.
 *
 * The cached state of a stream is used without reading the stream first: an append carries the
 * cached revision as its expected one, so if another process wrote meanwhile the append is refused
 * and the batch is decided again on what the stream now holds. A refusal or a command with nothing
 * to say writes nothing, so nothing would check it: when a batch has one, the stream's newer events
 * (if any) are read before it is settled.
 */
export function handleCommand<S, C extends DomainCommand, E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<S, C, E>,
  command: C,
  context: CommandContext,
  options: HandleOptions = {},
): Promise<CommandOutcome<S, E>> {
  return new Promise((resolve, reject) => {
    let streams = lanes.get(store);
    if (!streams) lanes.set(store, (streams = new Map()));
    const waiting: Waiting = {
      decider: decider as unknown as Waiting['decider'],
      command,
      context,
      fresh: options.freshStream === true,
      resolve: resolve as Waiting['resolve'],
      reject,
    };
    const queue = streams.get(streamId);
    if (queue) queue.push(waiting);
    else {
      streams.set(streamId, [waiting]);
      void drain(store, streams, streamId);
    }
  });
}

async function drain(store: EventStore, streams: Map<string, Waiting[]>, streamId: string): Promise<void> {
  const queue = streams.get(streamId)!;
  // Let the commands of this turn of the loop join the first batch.
  await Promise.resolve();
  while (queue.length) {
    // One decider per batch (a stream belongs to one aggregate; this only guards misuse).
    let size = 1;
    while (size < queue.length && size < MAX_BATCH && queue[size].decider === queue[0].decider) size++;
    const batch = queue.splice(0, size);
    try {
      await writeBatch(store, streamId, batch);
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  }
  streams.delete(streamId);
}

async function writeBatch(store: EventStore, streamId: string, batch: Waiting[]): Promise<void> {
  const decider = batch[0].decider;
  const fresh = batch.every((w) => w.fresh);
  let trustCache = true;
  for (let attempt = 1; ; attempt++) {
    const found = await current(store, streamId, decider as AnyDecider<unknown>, { cache: trustCache, fresh });
    const { revision, verified } = found;
    let snapshotAt = found.snapshotAt;
    // A fold just read is worth keeping even if the batch is refused (a cached one is kept already).
    let state = found.state;
    if (verified && revision !== null && found.position !== null)
      ({ state, snapshotAt } = await remember(
        store,
        streamId,
        { decider, state, revision, snapshotAt, position: found.position },
        found.lastEventId,
      ));
    const codec = (decider as AnyDecider<unknown>).snapshot;
    const keys = codec?.keyed ? batch.flatMap((w) => codec.keyed!.keysOf(w.command)) : [];
    state = await withEntries(store, streamId, codec, { state, revision, snapshotAt }, keys);
    let after = state;
    let next = revision ?? -1;
    const decided: Array<{ events: DomainEvent[]; state: unknown; revision: number } | { error: unknown }> = [];
    const appended: NewEvent[] = [];
    for (const { command, context } of batch) {
      let events: DomainEvent[];
      try {
        events = decider.decide(command, after, context.now);
      } catch (error) {
        decided.push({ error });
        continue;
      }
      const metadata = metadataOf(context);
      for (const e of events) {
        // Event ids are technical (EventStoreDB deduplicates retried appends by them) and must be UUIDs.
        appended.push({ id: randomUUID(), type: e.type, data: e.data, metadata });
        after = decider.evolve(after, e);
      }
      next += events.length;
      decided.push({ events, state: after, revision: next });
    }
    if (!verified && decided.some((d) => 'error' in d || d.events.length === 0)) {
      // Unchecked by any append: decide again on the stream as it is now (usually the same state).
      trustCache = false;
      attempt--;
      continue;
    }
    let position: LogPosition | null = null;
    let lastEventId: string | null = null;
    let nextRevision: StreamRevision | null = null;
    if (appended.length) {
      try {
        const result = await store.append(streamId, appended, revision ?? 'no_stream');
        position = result.position;
        lastEventId = appended[appended.length - 1].id;
        nextRevision = result.nextExpectedRevision;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevision) || attempt >= MAX_ATTEMPTS) throw error;
        trustCache = false;
        // Another process wrote first; right away the first time (the cache was merely behind).
        if (attempt > 1) await backOff(attempt);
        continue;
      }
    }
    batch.forEach((w, i) => {
      const outcome = decided[i];
      if ('error' in outcome) w.reject(outcome.error);
      else {
        if (outcome.events.length) w.context.metadata.writes?.note(position!, outcome.events);
        // A no-op may rest on what a batch-mate wrote: it reports the batch's position too; in a
        // batch that wrote nothing, the position of the stream's last event.
        w.resolve({
          events: outcome.events,
          state: outcome.state,
          revision: outcome.revision < 0 ? null : outcome.revision,
          position: appended.length ? position : found.position,
        });
      }
    });
    // After the answers: a snapshot due now is saved before the stream's next batch is decided.
    if (nextRevision !== null && position !== null)
      await remember(store, streamId, { decider, state: after, revision: nextRevision, snapshotAt, position }, lastEventId);
    return;
  }
}

/** Reads and folds a stream without deciding anything. */
export async function loadAggregate<S, E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Pick<Decider<S, never, E>, 'initialState' | 'evolve'>,
): Promise<{ state: S; revision: StreamRevision | null }> {
  const history = await store.readStream(streamId);
  return {
    state: fold(decider, history as unknown as E[]),
    revision: history.length ? history[history.length - 1].revision : null,
  };
}

/**
 * Reads and folds a stream as `handleCommand` does: from its cached fold (or its latest snapshot)
 * on, reading only the events after it, and leaving the result cached. For long streams read at
 * start (a hot deal's inventory, read by recovery and again to re-arm its holds' jobs): its first
 * command after the start reads only what came since. `keys`: the keyed entries (see
 * `SnapshotCodec`) the caller reads from the state, which it then holds.
 */
export async function loadCachedAggregate<S, E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<S, never, E> & { snapshot?: SnapshotCodec<S> },
  keys: readonly string[] = [],
): Promise<{ state: S; revision: StreamRevision | null }> {
  const found = await current(store, streamId, decider as AnyDecider<S>, { cache: false, fresh: false });
  let at: { state: unknown; snapshotAt: StreamRevision | null } = found;
  if (found.revision !== null && found.position !== null)
    at = await remember(
      store,
      streamId,
      { decider, state: found.state, revision: found.revision, snapshotAt: found.snapshotAt, position: found.position },
      found.lastEventId,
    );
  const state = await withEntries(
    store,
    streamId,
    decider.snapshot,
    { state: at.state as S, revision: found.revision, snapshotAt: at.snapshotAt },
    keys,
  );
  return { state, revision: found.revision };
}
