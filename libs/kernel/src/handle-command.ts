import { randomUUID } from 'node:crypto';
import { Decider, DomainCommand, DomainEvent, fold } from './decider';
import { KeyedMutex } from './keyed-mutex';
import { EventMetadata, EventStore, LogPosition, StreamRevision, WrongExpectedRevision } from './ports/event-store.port';

/** Who asks, and when: everything a command needs from outside the domain. */
export interface CommandContext {
  now: Date;
  metadata: Omit<EventMetadata, 'occurredAt'>;
}

export interface CommandOutcome<S, E> {
  /** Events appended by this command (empty when the decider had nothing to say). */
  events: E[];
  /** State after the new events. */
  state: S;
  /** Stream revision after the command, or null for a stream that still does not exist. */
  revision: StreamRevision | null;
  /** Log position of the last appended event; null when nothing was appended. */
  position: LogPosition | null;
}

const MAX_ATTEMPTS = 12;
const CACHED_STREAMS = 10_000;
const mutexes = new WeakMap<EventStore, KeyedMutex>();

/**
 * Folded state of recently handled streams, per store: the next command on a stream reads only the
 * events after the cached revision (a hot deal's inventory stream grows by two events a sale; this
 * is its snapshot). Another process's appends are simply the newer events read next time.
 */
interface Cached {
  decider: unknown;
  state: unknown;
  revision: StreamRevision;
}
const caches = new WeakMap<EventStore, Map<string, Cached>>();

function cacheFor(store: EventStore): Map<string, Cached> {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new Map()));
  return cache;
}

async function current<S, E extends DomainEvent>(store: EventStore, streamId: string, decider: Decider<S, never, E>): Promise<{ state: S; revision: StreamRevision | null }> {
  const cached = cacheFor(store).get(streamId);
  const base = cached && cached.decider === decider ? cached : null;
  const newer = await store.readStream(streamId, base ? base.revision + 1 : 0);
  let state = base ? (base.state as S) : decider.initialState();
  for (const event of newer as unknown as E[]) state = decider.evolve(state, event);
  const revision = newer.length ? newer[newer.length - 1].revision : base ? base.revision : null;
  return { state, revision };
}

function remember(store: EventStore, streamId: string, entry: Cached): void {
  const cache = cacheFor(store);
  cache.delete(streamId);
  if (cache.size >= CACHED_STREAMS) cache.delete(cache.keys().next().value!);
  cache.set(streamId, entry);
}

function mutexFor(store: EventStore): KeyedMutex {
  let mutex = mutexes.get(store);
  if (!mutex) mutexes.set(store, (mutex = new KeyedMutex()));
  return mutex;
}

const backOff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));

/**
 * Loads a stream, folds it, decides, and appends with the expected revision. Commands on one stream
 * are serialised inside the process; a conflict with another process reloads and decides again,
 * with jittered back-off. Domain errors from `decide` propagate unchanged.
 */
export function handleCommand<S, C extends DomainCommand, E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<S, C, E>,
  command: C,
  context: CommandContext,
): Promise<CommandOutcome<S, E>> {
  return mutexFor(store).run(streamId, async () => {
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await current(store, streamId, decider as unknown as Decider<S, never, E>);
      if (revision !== null) remember(store, streamId, { decider, state, revision });
      const events = decider.decide(command, state, context.now);
      if (events.length === 0) return { events, state, revision, position: null };
      const metadata: EventMetadata = { ...context.metadata, occurredAt: context.now.toISOString() };
      try {
        const result = await store.append(
          streamId,
          // Event ids are technical (EventStoreDB deduplicates retried appends by them) and must be UUIDs.
          events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })),
          revision ?? 'no_stream',
        );
        const after = events.reduce(decider.evolve, state);
        remember(store, streamId, { decider, state: after, revision: result.nextExpectedRevision });
        return { events, state: after, revision: result.nextExpectedRevision, position: result.position };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevision) || attempt >= MAX_ATTEMPTS) throw error;
        await backOff(attempt);
      }
    }
  });
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
