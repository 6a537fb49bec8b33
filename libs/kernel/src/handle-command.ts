import { Decider, DomainCommand, DomainEvent, fold, SnapshotCodec } from './decider';
import { BatchWriter, Waiting } from './command-engine/write-batch';
import { AnyDecider, StreamCache } from './command-engine/stream-cache';
import { StreamLanes } from './command-engine/stream-lanes';
import type { RequestWrites } from './read-your-writes';
import { EventMetadata, EventStore, LogPosition, StreamRevision } from './ports/event-store.port';

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

/** Options of {@link handleCommand}. */
export interface HandleOptions {
  /**
   * The stream's id was drawn a moment ago for this command (a new purchase, its coupons): decide
   * on the empty stream without reading it first. The append expects no stream, so if the stream
   * exists after all (a retry after a crash) it is refused and the batch decided again on a read.
   */
  freshStream?: boolean;
}

/** The lanes of each store's streams, each written by a batch writer over the store's stream cache. */
const lanes = new WeakMap<EventStore, StreamLanes<Waiting>>();

function lanesOf(store: EventStore): StreamLanes<Waiting> {
  let found = lanes.get(store);
  if (!found) lanes.set(store, (found = new StreamLanes(new BatchWriter(store, StreamCache.of(store)))));
  return found;
}

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
    lanesOf(store).enqueue(streamId, {
      decider: decider as unknown as Waiting['decider'],
      command,
      context,
      fresh: options.freshStream === true,
      resolve: resolve as Waiting['resolve'],
      reject,
    });
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
  const cache = StreamCache.of(store);
  const found = await cache.current(streamId, decider as AnyDecider<S>, { cache: false, fresh: false });
  let at: { state: unknown; snapshotAt: StreamRevision | null } = found;
  if (found.revision !== null && found.position !== null)
    at = await cache.remember(
      streamId,
      { decider, state: found.state, revision: found.revision, snapshotAt: found.snapshotAt, position: found.position },
      found.lastEventId,
    );
  const state = await cache.withEntries(
    streamId,
    decider.snapshot,
    { state: at.state as S, revision: found.revision, snapshotAt: at.snapshotAt },
    keys,
  );
  return { state, revision: found.revision };
}
