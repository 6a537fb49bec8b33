import { randomUUID } from 'node:crypto';
import { DomainEvent } from '../decider';
import { appendHolding, appendWithViews, InlineViews, observerOf } from '../ports/event-store.capabilities';
import {
  AppendResult,
  EventStore,
  laterPosition,
  LogPosition,
  NewEvent,
  StreamAppend,
  StoreBusy,
  StreamRevision,
  WrongExpectedRevision,
} from '../ports/event-store.port';
import { WriteContended } from '../errors';
import type { CommandOutcome, Part, Waiting } from './command';
import { Folded, inlineProjectionsOf, InlineProjections } from './inline-projections';
import { metadataOf } from './event-metadata';
import { LaneWriter } from './stream-lanes';
import { AnyDecider, StreamCache } from './stream-cache';

const MAX_ATTEMPTS = 12;
const NONE: ReadonlySet<string> = new Set();
/** The attempt from which a batch is written with its lane's stream held (see `appendHolding`). */
const HOLD_FROM = 3;

const backOff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));

/** A part's decision: its events, with its stream's state and revision after them. */
type PartDecided = { streamId: string; events: DomainEvent[]; state: unknown; revision: number };
/** A unit's decision: each part's, or the first refusal (and the stream it rests on). */
type Decided = { parts: PartDecided[] } | { error: unknown; streamId: string };

/** A batch decided: its streams, each unit's decision, and the appends that write them. */
interface Plan {
  tracks: Map<string, Track>;
  decided: Decided[];
  appends: StreamAppend[];
  /** Its inline projections' documents: those to write with it, all it folded, and the ones each unit folded. */
  views: InlineViews;
  folded: Map<string, Folded>;
  foldedBy: Array<Set<string>>;
}

/** A stream a batch decides on: its state as found, and as the batch's decisions so far leave it. */
interface Track {
  decider: AnyDecider<unknown>;
  fresh: boolean;
  keys: string[];
  verified: boolean;
  /** The revision and position the batch found it at. */
  revision: StreamRevision | null;
  position: LogPosition | null;
  snapshotAt: StreamRevision | null;
  /** State and revision after the events decided so far (-1: no stream). */
  state: unknown;
  next: number;
  appended: NewEvent[];
}

/**
 * Writes the batches of one store's lanes, as `handleCommand` and `handleCommands` promise: decides
 * a batch's commands and units one after the other, each against the states the ones before it
 * leave, appends all their events in one write (each stream at its expected revision: one atomic
 * write across streams where the store has it), decides the whole batch again on a conflict (from
 * the third attempt with the lane's stream held for it, so that a process which keeps losing the
 * race for a hot stream gets its turn), and only then settles each. A unit is whole or nothing: a
 * part refused leaves its others undecided.
 */
export class BatchWriter implements LaneWriter<Waiting> {
  constructor(
    private readonly store: EventStore,
    private readonly cache: StreamCache,
  ) {}

  /** The store's inline projections (registered as the process composed its parts), or null. */
  private get inline(): InlineProjections | null {
    return inlineProjectionsOf(this.store);
  }

  async write(laneStream: string, batch: Waiting[]): Promise<void> {
    // The streams whose cached fold may be used unread; one found behind is read from then on.
    const untrusted = new Set<string>();
    for (let attempt = 1; ; attempt++) {
      let plan: Plan | null = null;
      const decide = async () => (plan = await this.decide(laneStream, batch, untrusted)).appends;
      let results: AppendResult[];
      let written: ReadonlySet<string> = NONE;
      try {
        if (attempt >= HOLD_FROM) {
          // Lost twice: decided on the lane's stream as it is with its writes held for this batch.
          // Its units' documents are then left to their requests (written after, or folded).
          untrusted.add(laneStream);
          results = await appendHolding(this.store, laneStream, decide);
        } else {
          const appends = await decide();
          ({ results, written } = await appendWithViews(this.store, appends, plan!.views));
        }
      } catch (error) {
        if (!(error instanceof WrongExpectedRevision || error instanceof StoreBusy)) throw error;
        // Other processes' writes to these streams kept coming first: a busy moment, not a failure.
        if (attempt >= MAX_ATTEMPTS) {
          observerOf(this.store)?.contended?.('gave_up');
          throw new WriteContended('a write');
        }
        observerOf(this.store)?.contended?.(attempt + 1 >= HOLD_FROM ? 'held' : 'decided_again');
        if (error instanceof WrongExpectedRevision) untrusted.add(error.streamId);
        // Another process wrote first: at once while the next attempt reads again or holds the stream.
        if (attempt >= HOLD_FROM || error instanceof StoreBusy) await backOff(attempt);
        continue;
      }
      const { tracks, decided, appends, folded, foldedBy } = plan!;
      // A no-op may rest on what a batch-mate wrote: it reports the batch's position too.
      const position = results.reduce<LogPosition | null>((latest, r) => laterPosition(latest, r.position), null);
      // Each request keeps what its units folded, at the batch's position, and sees the views all of its documents reached.
      if (folded.size && position !== null)
        batch.forEach(({ context }, i) => {
          const writes = context.metadata.writes;
          if (!writes || !foldedBy[i].size) return;
          const shown = new Map<string, boolean>();
          for (const key of foldedBy[i]) {
            writes.folded.set(key, { doc: { ...folded.get(key)!.doc, _pos: position }, written: written.has(key) });
            const collection = key.slice(0, key.indexOf(' '));
            shown.set(collection, (shown.get(collection) ?? true) && written.has(key));
          }
          for (const [collection, all] of shown) if (all) writes.shown.add(collection);
        });
      settle(batch, decided, position, tracks);
      // After the answers: a snapshot due now is saved before the stream's next batch is decided.
      for (let i = 0; i < appends.length; i++) {
        const track = tracks.get(appends[i].streamId)!;
        const { nextExpectedRevision: revision, position: at } = results[i];
        const lastEventId = track.appended[track.appended.length - 1].id;
        const { decider, state, snapshotAt } = track;
        await this.cache.remember(appends[i].streamId, { decider, state, revision, snapshotAt, position: at }, lastEventId);
      }
      return;
    }
  }

  /**
   * Decides one unit on its streams as they are now (each read past its cached fold), as `write`
   * would decide it, and appends nothing: each part's outcome (its events are what it would
   * append), at the latest position of the streams as read; or the unit's first refusal, thrown.
   */
  async decideAside(unit: Waiting): Promise<Array<CommandOutcome<unknown, DomainEvent>>> {
    const untrusted = new Set(unit.parts.map((part) => part.streamId));
    const tracks = await this.load(unit.parts[0].streamId, [unit], untrusted);
    const decided = decideUnit(unit, tracks);
    if ('error' in decided) throw decided.error;
    const position = decided.parts.reduce<LogPosition | null>((at, p) => laterPosition(at, tracks.get(p.streamId)!.position), null);
    return decided.parts.map(({ events, state, revision }) => ({ events, state, revision: revision < 0 ? null : revision, position }));
  }

  /** Decides the batch on its streams' states, and the appends that write it (each stream at its expected revision). */
  private async decide(laneStream: string, batch: Waiting[], untrusted: Set<string>): Promise<Plan> {
    for (;;) {
      const tracks = await this.load(laneStream, batch, untrusted);
      const decided = batch.map((w) => decideUnit(w, tracks));
      // A refusal or a part with nothing to say writes nothing, so no append checks it: one that
      // rests on a cached fold is decided again on the stream as it is now (usually the same state).
      const unchecked = [...uncheckedStreams(decided, tracks)];
      if (unchecked.length) {
        for (const streamId of unchecked) untrusted.add(streamId);
        continue;
      }
      const appends: StreamAppend[] = [];
      for (const [streamId, track] of tracks)
        if (track.appended.length) appends.push({ streamId, events: track.appended, expected: track.revision ?? 'no_stream' });
      return { tracks, decided, appends, ...this.inlineViews(batch, decided) };
    }
  }

  /** The inline projections' documents of the batch's accepted units, folded unit by unit (see `InlineProjections`). */
  private inlineViews(batch: Waiting[], decided: Decided[]): Pick<Plan, 'views' | 'folded' | 'foldedBy'> {
    const folded = new Map<string, Folded>();
    const foldedBy = decided.map(() => new Set<string>());
    const byCollection = new Map<string, InlineViews[number]['documents'][number][]>();
    const inline = this.inline;
    if (inline)
      decided.forEach((unit, i) => {
        if ('error' in unit) return;
        const pending = unit.parts.flatMap(({ streamId, events }) => events.map(({ type, data }) => ({ type, data, streamId })));
        const earlier = batch[i].context.metadata.writes?.folded ?? null;
        for (const { collection, documents } of inline.fold(pending, folded, foldedBy[i], earlier)) {
          let kept = byCollection.get(collection);
          if (!kept) byCollection.set(collection, (kept = []));
          kept.push(...documents);
        }
      });
    return { views: [...byCollection].map(([collection, documents]) => ({ collection, documents })), folded, foldedBy };
  }

  /** The state of every stream the batch names, the lane's first: cached where trusted, else read (and kept). */
  private async load(laneStream: string, batch: Waiting[], untrusted: Set<string>): Promise<Map<string, Track>> {
    const named = new Map<string, { decider: AnyDecider<unknown>; fresh: boolean; keys: string[] }>();
    named.set(laneStream, { decider: batch[0].decider as AnyDecider<unknown>, fresh: true, keys: [] });
    for (const { parts } of batch)
      for (const part of parts) {
        let stream = named.get(part.streamId);
        if (!stream) named.set(part.streamId, (stream = { decider: part.decider as AnyDecider<unknown>, fresh: true, keys: [] }));
        stream.fresh &&= part.fresh;
        const keyed = stream.decider.snapshot?.keyed;
        if (keyed) stream.keys.push(...keyed.keysOf(part.command as never));
      }
    const tracks = new Map<string, Track>();
    for (const [streamId, { decider, fresh, keys }] of named) {
      const found = await this.cache.current(streamId, decider, { cache: !untrusted.has(streamId), fresh });
      const { revision, verified, position } = found;
      let { state, snapshotAt } = found;
      // A fold just read is worth keeping even if the batch is refused (a cached one is kept already).
      if (verified && revision !== null && position !== null)
        ({ state, snapshotAt } = await this.cache.remember(
          streamId,
          { decider, state, revision, snapshotAt, position },
          found.lastEventId,
        ));
      state = await this.cache.withEntries(streamId, decider.snapshot, { state, revision, snapshotAt }, keys);
      tracks.set(streamId, { decider, fresh, keys, verified, revision, position, snapshotAt, state, next: revision ?? -1, appended: [] });
    }
    return tracks;
  }
}

/**
 * Decides a unit's parts in order, each against the state its stream is left in by what was
 * decided before it; all accepted: their events join the batch's appends and the streams' states
 * move on; one refused: nothing of the unit does.
 */
function decideUnit({ parts, context }: Waiting, tracks: Map<string, Track>): Decided {
  const decided: PartDecided[] = [];
  // The states the unit's own parts leave, kept apart until the whole unit is accepted.
  const after = new Map<string, { state: unknown; next: number }>();
  for (const part of parts) {
    const track = tracks.get(part.streamId)!;
    const at = after.get(part.streamId) ?? { state: track.state, next: track.next };
    let events: DomainEvent[];
    try {
      events = part.decider.decide(part.command, at.state, context.now);
    } catch (error) {
      return { error, streamId: part.streamId };
    }
    let state = at.state;
    for (const event of events) state = part.decider.evolve(state, event);
    const next = at.next + events.length;
    after.set(part.streamId, { state, next });
    decided.push({ streamId: part.streamId, events, state, revision: next });
  }
  const metadata = metadataOf(context);
  for (const { streamId, events } of decided) {
    const track = tracks.get(streamId)!;
    // Event ids are technical (EventStoreDB deduplicates retried appends by them) and must be UUIDs.
    for (const e of events) track.appended.push({ id: randomUUID(), type: e.type, data: e.data, metadata });
  }
  for (const [streamId, { state, next }] of after) Object.assign(tracks.get(streamId)!, { state, next });
  return { parts: decided };
}

/** The streams a refusal or a part with nothing to say rests on without their fold having been read. */
function* uncheckedStreams(decided: Decided[], tracks: Map<string, Track>): Iterable<string> {
  const seen = new Set<string>();
  for (const unit of decided) {
    const resting = 'error' in unit ? [unit.streamId] : unit.parts.filter((p) => p.events.length === 0).map((p) => p.streamId);
    for (const streamId of resting)
      if (!tracks.get(streamId)!.verified && !seen.has(streamId)) {
        seen.add(streamId);
        yield streamId;
      }
  }
}

/**
 * Answers each command or unit of a written batch: its refusal, or its parts' outcomes at
 * `written`, the position of the batch's last event; in a batch that wrote nothing, at the latest
 * position of the streams the unit names as they were found. A part that appended reports it to its
 * caller's `writes` too, if the caller carries the request's tracker.
 */
function settle(batch: Waiting[], decided: Decided[], written: LogPosition | null, tracks: Map<string, Track>): void {
  batch.forEach((w, i) => {
    const unit = decided[i];
    if ('error' in unit) return w.reject(unit.error);
    const position = written ?? unit.parts.reduce<LogPosition | null>((at, p) => laterPosition(at, tracks.get(p.streamId)!.position), null);
    const outcomes: Array<CommandOutcome<unknown, DomainEvent>> = unit.parts.map(({ events, state, revision }) => {
      if (events.length) w.context.metadata.writes?.note(position!, events);
      return { events, state, revision: revision < 0 ? null : revision, position };
    });
    w.resolve(outcomes);
  });
}

export type { Part, Waiting };
