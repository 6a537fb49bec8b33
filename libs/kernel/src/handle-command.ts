import { Decider, DomainCommand, DomainEvent, fold, SnapshotCodec } from './decider';
import type { CommandContext, CommandOutcome, CommandPart, HandleOptions, Part, Waiting } from './command-engine/command';
import { BatchWriter } from './command-engine/write-batch';
import { AnyDecider, StreamCache } from './command-engine/stream-cache';
import { StreamLanes } from './command-engine/stream-lanes';
import { EventStore, StreamRevision } from './ports/event-store.port';

export type { CommandContext, CommandOutcome, CommandPart, HandleOptions } from './command-engine/command';

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
    const part: Part = { streamId, decider: decider as unknown as Part['decider'], command, fresh: options.freshStream === true };
    lanesOf(store).enqueue(streamId, {
      decider: part.decider,
      parts: [part],
      context,
      resolve: (outcomes) => resolve(outcomes[0] as unknown as CommandOutcome<S, E>),
      reject,
    });
  });
}

/**
 * Decides several commands, each on its stream, as one unit of work: all their events are appended
 * together (one transaction across the streams where the store has it, see
 * `AtomicAcrossStreams`), or none is. The parts are decided in the order given, a part
 * on a stream named before it against the state that part leaves; the first part refused is the
 * unit's refusal, and nothing of it is written. Resolves with each part's outcome, in that order;
 * their position is the last event's of the write that carried them.
 *
 * The unit takes its turn in its lane part's stream (see `CommandPart.lane`) as `handleCommand`'s
 * commands do: the units and commands waiting on that stream (purchases on one deal's inventory)
 * are decided one after the other and written in one append together with their other streams'
 * events. Those other streams are decided on their cached folds, their expected revisions checked
 * by the write: another process's or lane's write to one meanwhile makes the batch be decided again.
 *
 * Where the store appends stream by stream, the lane's stream is written first: a conflict or a
 * failure on a later stream leaves the earlier written (each part's decider must then tolerate
 * what is left: a hold lapses, a lock ends by itself).
 */
export function handleCommands(
  store: EventStore,
  parts: readonly CommandPart[],
  context: CommandContext,
): Promise<Array<CommandOutcome<unknown, DomainEvent>>> {
  if (parts.length === 0) return Promise.reject(new TypeError('handleCommands needs at least one command'));
  const lanePart = parts.find((p) => p.lane) ?? parts[0];
  for (const p of parts)
    if (p.streamId === lanePart.streamId && p.decider !== lanePart.decider)
      return Promise.reject(new TypeError(`handleCommands: stream ${p.streamId} is given two deciders`));
  return new Promise((resolve, reject) => {
    const unit: Part[] = parts.map((p) => ({
      streamId: p.streamId,
      decider: p.decider as Part['decider'],
      command: p.command,
      fresh: p.freshStream === true,
    }));
    lanesOf(store).enqueue(lanePart.streamId, { decider: lanePart.decider as Part['decider'], parts: unit, context, resolve, reject });
  });
}

/**
 * Decides a unit of work as `handleCommands` would, on its streams as they are now, and appends
 * nothing (a dry run): resolves with each part's outcome, in the order given (the events each would
 * append, the state after them, the position of the streams as read), or rejects with the unit's
 * first refusal. Each stream is read past its cached fold first, as before a refusal. A command
 * decided on a stream meanwhile may make the same unit decide otherwise a moment later.
 */
export function decideCommands(
  store: EventStore,
  parts: readonly CommandPart[],
  context: CommandContext,
): Promise<Array<CommandOutcome<unknown, DomainEvent>>> {
  if (parts.length === 0) return Promise.reject(new TypeError('decideCommands needs at least one command'));
  const unit: Part[] = parts.map((p) => ({
    streamId: p.streamId,
    decider: p.decider as Part['decider'],
    command: p.command,
    fresh: p.freshStream === true,
  }));
  for (const p of unit)
    if (unit.some((q) => q.streamId === p.streamId && q.decider !== p.decider))
      return Promise.reject(new TypeError(`decideCommands: stream ${p.streamId} is given two deciders`));
  const writer = new BatchWriter(store, StreamCache.of(store));
  return writer.decideAside({ decider: unit[0].decider, parts: unit, context, resolve: () => undefined, reject: () => undefined });
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
