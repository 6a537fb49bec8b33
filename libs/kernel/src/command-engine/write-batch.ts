import { randomUUID } from 'node:crypto';
import { Decider, DomainCommand, DomainEvent } from '../decider';
import type { CommandContext, CommandOutcome } from '../handle-command';
import { EventStore, LogPosition, NewEvent, StreamRevision, WrongExpectedRevision } from '../ports/event-store.port';
import { metadataOf } from './event-metadata';
import { LaneWriter } from './stream-lanes';
import { AnyDecider, StreamCache } from './stream-cache';

const MAX_ATTEMPTS = 12;

const backOff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));

/** A command waiting for its stream's next write. */
export interface Waiting {
  decider: Decider<unknown, DomainCommand, DomainEvent>;
  command: DomainCommand;
  context: CommandContext;
  fresh: boolean;
  resolve: (outcome: CommandOutcome<unknown, DomainEvent>) => void;
  reject: (error: unknown) => void;
}

/** A command's decision: its events, with the state and revision after them, or its refusal. */
type Decided = { events: DomainEvent[]; state: unknown; revision: number } | { error: unknown };

/**
 * Writes the batches of one store's streams, as `handleCommand` promises: decides a batch's commands
 * one after the other against one state, appends their events in one write with the expected
 * revision, decides the whole batch again on a conflict, and only then settles each command.
 */
export class BatchWriter implements LaneWriter<Waiting> {
  constructor(
    private readonly store: EventStore,
    private readonly cache: StreamCache,
  ) {}

  async write(streamId: string, batch: Waiting[]): Promise<void> {
    const decider = batch[0].decider;
    const fresh = batch.every((w) => w.fresh);
    let trustCache = true;
    for (let attempt = 1; ; attempt++) {
      const found = await this.cache.current(streamId, decider as AnyDecider<unknown>, { cache: trustCache, fresh });
      const { revision, verified } = found;
      let snapshotAt = found.snapshotAt;
      // A fold just read is worth keeping even if the batch is refused (a cached one is kept already).
      let state = found.state;
      if (verified && revision !== null && found.position !== null)
        ({ state, snapshotAt } = await this.cache.remember(
          streamId,
          { decider, state, revision, snapshotAt, position: found.position },
          found.lastEventId,
        ));
      const codec = (decider as AnyDecider<unknown>).snapshot;
      const keys = codec?.keyed ? batch.flatMap((w) => codec.keyed!.keysOf(w.command)) : [];
      state = await this.cache.withEntries(streamId, codec, { state, revision, snapshotAt }, keys);
      const decided: Decided[] = [];
      const appended: NewEvent[] = [];
      const after = decideBatch(decider, batch, state, revision, decided, appended);
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
          const result = await this.store.append(streamId, appended, revision ?? 'no_stream');
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
      // A no-op may rest on what a batch-mate wrote: it reports the batch's position too; in a
      // batch that wrote nothing, the position of the stream's last event.
      settle(batch, decided, appended.length ? position : found.position);
      // After the answers: a snapshot due now is saved before the stream's next batch is decided.
      if (nextRevision !== null && position !== null)
        await this.cache.remember(streamId, { decider, state: after, revision: nextRevision, snapshotAt, position }, lastEventId);
      return;
    }
  }
}

/**
 * Decides the batch's commands in order, each against the state the ones before it leave, from
 * `state` at `revision`: fills `decided` (one entry per command) and `appended` (the events to
 * write), the caller's arrays, and returns the state after them all.
 */
function decideBatch(
  decider: Waiting['decider'],
  batch: Waiting[],
  state: unknown,
  revision: StreamRevision | null,
  decided: Decided[],
  appended: NewEvent[],
): unknown {
  let after = state;
  let next = revision ?? -1;
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
  return after;
}

/**
 * Answers each command of a written batch: its refusal, or its outcome at `position`. A command
 * that appended reports it to its caller's `writes` too, if the caller carries the request's tracker.
 */
function settle(batch: Waiting[], decided: Decided[], position: LogPosition | null): void {
  batch.forEach((w, i) => {
    const outcome = decided[i];
    if ('error' in outcome) w.reject(outcome.error);
    else {
      if (outcome.events.length) w.context.metadata.writes?.note(position!, outcome.events);
      w.resolve({
        events: outcome.events,
        state: outcome.state,
        revision: outcome.revision < 0 ? null : outcome.revision,
        position,
      });
    }
  });
}
