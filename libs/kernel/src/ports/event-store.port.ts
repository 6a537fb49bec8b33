import type { SnapshotStore } from './snapshot-store.port';
import type { ViewDocument } from './view-store.port';

/**
 * A position in the whole event log. Opaque to callers, but with two promises every adapter keeps:
 * plain string comparison orders positions exactly as the log orders them (each adapter writes
 * fixed-width digits, so mingo and MongoDB can filter and sort on them too; a PostgreSQL log begun
 * before its positions named transactions keeps its older, shorter ones, all ordered before the
 * rest), and it is JSON-safe (no BigInt).
 */
export type LogPosition = string;

/** The later of two positions (null when neither is known). */
export const laterPosition = (a: LogPosition | null, b: LogPosition | null): LogPosition | null =>
  a === null ? b : b === null ? a : a > b ? a : b;

/** 0-based revision of the last event of a stream (a stream holding one event is at revision 0). */
export type StreamRevision = number;

/** Expected state of a stream on append: a revision, `no_stream`, or `any` (no concurrency check). */
export type ExpectedRevision = StreamRevision | 'no_stream' | 'any';

/** Who and what caused an event. Never holds a card number, a CVV or a secret. */
export interface EventMetadata {
  occurredAt: string;
  partnerId?: string;
  /** `partner:<id>`, `user-token:<id>`, `operator`, `system`. */
  actor?: string;
  requestId?: string;
  correlationId?: string;
  causationId?: string;
}

/**
 * An event to append; `id` makes a retried append idempotent where the backend supports it. `data`
 * and `metadata` are JSON values. The appender must not change them afterwards: a store may hand
 * these very objects (frozen) to the subscriptions instead of parsing back what it wrote.
 */
export interface NewEvent<T extends string = string, D = unknown> {
  id: string;
  type: T;
  data: D;
  metadata: EventMetadata;
}

/** An event read from the log. Readers share it (the projections read one decoded page): read-only. */
export interface RecordedEvent<T extends string = string, D = unknown> extends NewEvent<T, D> {
  streamId: string;
  revision: StreamRevision;
  position: LogPosition;
}

/** One stream's part of an append to several streams (see `EventStore.appendToStreams`). */
export interface StreamAppend {
  streamId: string;
  events: NewEvent[];
  expected: ExpectedRevision;
}

/** Refuses what no store may be asked: no append, an append without events, a stream named twice. */
export function checkStreamAppends(appends: readonly StreamAppend[]): void {
  if (appends.length === 0) throw new TypeError('appendToStreams needs at least one append');
  const streams = new Set<string>();
  for (const { streamId, events } of appends) {
    if (events.length === 0) throw new TypeError(`appendToStreams: the append to ${streamId} has no events`);
    if (streams.has(streamId)) throw new TypeError(`appendToStreams: stream ${streamId} is named twice`);
    streams.add(streamId);
  }
}

/**
 * Documents of the read side written in the same transaction as appends (inline views): each over a
 * stored one that is older, never over a newer one, and only into the generation of its collection
 * that readers use. A document folded from events of these appends (`_pos` at `PENDING_POSITION`)
 * is stamped with the position of their last event; any other keeps its own.
 */
export type InlineViews = ReadonlyArray<{ collection: string; documents: readonly ViewDocument[] }>;

export interface AppendResult {
  nextExpectedRevision: StreamRevision;
  /** Position of the last appended event. */
  position: LogPosition;
}

/** The stream was not at the expected revision: reload, decide again, append again. */
export class WrongExpectedRevision extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: StreamRevision | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${expected}, actual ${actual}`);
    this.name = 'WrongExpectedRevision';
  }
}

/**
 * The store could not put the append in the log's order in time (other processes' writes to the
 * same streams kept coming first); nothing of it was written, and it may be sent again.
 */
export class StoreBusy extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreBusy';
  }
}

export interface EventBatchHandler {
  (events: RecordedEvent[]): Promise<void>;
}

export interface LogSubscription {
  /** Stops delivery; resolves once no handler call is running. */
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** Deliver events strictly after this position; `null` means from the start of the log. */
  after: LogPosition | null;
  /** Called with consecutive batches in log order; the next batch waits for the promise. */
  onEvents: EventBatchHandler;
  /** Called when delivery failed and will be retried from the last delivered position. */
  onError?: (error: unknown) => void;
  /**
   * The event types the subscriber reads, when it reads only some: events of other types may come
   * as stored (their personal data still sealed). All events are delivered either way.
   */
  types?: readonly string[];
}

/** Told of what a store writes (the service's metrics). Called synchronously: must be cheap and never throw. */
export interface StoreObserver {
  /** An append was acknowledged, with these events. */
  appended(events: readonly NewEvent[]): void;
  /** A group of appends was committed together (one transaction, one sync), taking `seconds` from its start. */
  committed(appends: number, seconds: number): void;
  /**
   * A batch of the command engine found a stream moved by another writer (or the store too busy to
   * order it), and what followed: decided again on the stream read again, decided again with the
   * stream held for it, or given up (answered 503).
   */
  contended?(outcome: Contention): void;
}

/** What followed a batch's lost race for its streams (see {@link StoreObserver.contended}). */
export type Contention = 'decided_again' | 'held' | 'gave_up';

/** What {@link EventStore.readTypes} reads: up to `maxCount` events of `types` after `after`. */
export interface TypesRead {
  after: LogPosition | null;
  maxCount: number;
  types: readonly string[];
}

/** A page of {@link EventStore.readTypes}: its events, and the position through which the log was read. */
export interface TypesPage {
  events: RecordedEvent[];
  through: LogPosition | null;
}

/**
 * The append-only log of events, grouped in streams (`<aggregate>-<id>`).
 *
 * Promises: an append is atomic for its events and is acknowledged only once durable; it succeeds
 * only if the stream is at `expected` (otherwise it throws {@link WrongExpectedRevision}); events
 * of one stream keep their order, and the whole log has one total order given by
 * {@link LogPosition}. `subscribe` delivers every event after a position exactly in that order
 * (the same event objects may go to every subscription: they are read-only),
 * first the history and then live, at least once (a re-subscribe after an error may repeat a batch).
 *
 * Leaves out: system events of the backend, stream deletion, event-type filters.
 */
export abstract class EventStore {
  abstract readonly backend: string;

  /** Where snapshots of long streams are kept beside this log, if anywhere (`handleCommand` uses them). */
  snapshots: SnapshotStore | null = null;

  abstract append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;

  /**
   * Whether {@link appendToStreams} is one transaction (all of its appends written, or none). A store
   * without transactions across streams appends them one after the other.
   */
  readonly atomicAcrossStreams: boolean = false;

  /**
   * Appends to several distinct streams, each at its expected revision, their events in the order
   * given, and answers each append's result in that order. Where {@link atomicAcrossStreams}, in one
   * transaction: if a stream is not at its expected revision, throws that stream's
   * {@link WrongExpectedRevision} (the first in the order given) and writes nothing. Here, for a store
   * without such transactions: one append after the other, so a refusal leaves those before it written.
   */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    checkStreamAppends(appends);
    const results: AppendResult[] = [];
    for (const { streamId, events, expected } of appends) results.push(await this.append(streamId, events, expected));
    return results;
  }

  /**
   * Writes the appends `decide` returns (none: nothing) with `held`'s writes held for them: no other
   * process appends to that stream from the moment `decide` is called until they are written, so
   * what `decide` reads of it is what the write will find. A process that keeps losing the race on
   * a contended stream to one that decides on its cached state takes its turn this way. Here, for a
   * store without such a hold: `decide`, then the appends as {@link appendToStreams} writes them.
   */
  async appendHolding(_held: string, decide: () => Promise<readonly StreamAppend[]>): Promise<AppendResult[]> {
    return this.appendAll(await decide());
  }

  /**
   * Whether {@link appendWithViews} writes view documents in the appends' own transaction: a store
   * whose views live on the same server, so every reader finds them with the events.
   */
  get writesViews(): boolean {
    return false;
  }

  /**
   * {@link appendAll}, with `views` written in the same transaction where {@link writesViews} (then
   * `viewsWritten` says whether they were: not into a generation a rebuild has just replaced, say);
   * here, for a store that cannot, the appends alone, and `viewsWritten` false.
   */
  async appendWithViews(appends: readonly StreamAppend[], views: InlineViews): Promise<{ results: AppendResult[]; viewsWritten: boolean }> {
    void views;
    return { results: await this.appendAll(appends), viewsWritten: false };
  }

  /** Writes the appends as one {@link append} when there is one, as {@link appendToStreams} when more, and nothing when none. */
  async appendAll(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (appends.length === 0) return [];
    if (appends.length === 1) return [await this.append(appends[0].streamId, appends[0].events, appends[0].expected)];
    return this.appendToStreams(appends);
  }

  /**
   * The events of a stream in order, from revision `fromRevision` (0, the whole stream, when not
   * given); an empty array when the stream does not exist or has nothing from there.
   */
  abstract readStream(streamId: string, fromRevision?: StreamRevision): Promise<RecordedEvent[]>;

  /** Up to `maxCount` events strictly after `after` (or from the start), in log order. */
  abstract readAll(options: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]>;

  /**
   * Up to `maxCount` events of `types` strictly after `after`, in log order, and the position
   * `through` which the log has been read: the last event's when the page is full, else the end of
   * the log as far as it can be read now (no event committed later goes before it), `after` for a
   * log with nothing more. A reader of a few types goes on from `through` and passes the rest of
   * the log once. Here, pages of {@link readAll} filtered; a store that can filter where it reads does.
   */
  async readTypes({ after, maxCount, types }: TypesRead): Promise<TypesPage> {
    const wanted = new Set(types);
    const events: RecordedEvent[] = [];
    let through = after;
    while (events.length < maxCount) {
      const page = await this.readAll({ after: through, maxCount: Math.max(maxCount, 1000) });
      if (page.length === 0) break;
      for (const event of page) {
        through = event.position;
        if (wanted.has(event.type) && events.push(event) === maxCount) break;
      }
    }
    return { events, through };
  }

  /**
   * How many events the log holds after `after` (from the start when null), counting up to
   * `limit` when given. This reads the log page by page; stores that can count cheaply do.
   */
  async countAfter(after: LogPosition | null, limit = Number.POSITIVE_INFINITY): Promise<number> {
    let count = 0;
    let from = after;
    while (count < limit) {
      const page = await this.readAll({ after: from, maxCount: Math.min(5000, limit - count) });
      if (page.length === 0) break;
      count += page.length;
      from = page[page.length - 1].position;
    }
    return count;
  }

  /** How many events of each type the log holds. This reads the whole log; stores that can count cheaply do. */
  async countByType(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (let after: LogPosition | null = null; ;) {
      const page = await this.readAll({ after, maxCount: 5000 });
      if (page.length === 0) return counts;
      for (const event of page) counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
      after = page[page.length - 1].position;
    }
  }

  /** Catch-up subscription: history after `after`, then live events, in order. */
  abstract subscribe(options: SubscribeOptions): LogSubscription;

  /** Position of the newest event, or null for an empty log. */
  abstract head(): Promise<LogPosition | null>;

  /** Cheap liveness probe for /health. */
  abstract ping(): Promise<void>;

  /** Starts what the first append would start (the embedded log's write thread): a serving process calls it as it starts. */
  warmUp(): void {}

  abstract close(): Promise<void>;

  private observer: StoreObserver | null = null;
  private acknowledged = 0;

  /** How many appends this store has acknowledged since it was opened in this process. */
  get appendsAcknowledged(): number {
    return this.acknowledged;
  }

  /** Tells `observer` of every append acknowledged and every group committed from now on (one observer). */
  observe(observer: StoreObserver): void {
    this.observer = observer;
  }

  protected reportAppended(events: readonly NewEvent[]): void {
    this.acknowledged++;
    this.observer?.appended(events);
  }

  protected reportCommitted(appends: number, seconds: number): void {
    this.observer?.committed(appends, seconds);
  }

  /** Told by the command engine of a batch that lost its race for its streams, and what followed. */
  reportContention(outcome: Contention): void {
    this.observer?.contended?.(outcome);
  }
}
