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

/** What `readTypes` (event-store.capabilities.ts) reads: up to `maxCount` events of `types` after `after`. */
export interface TypesRead {
  after: LogPosition | null;
  maxCount: number;
  types: readonly string[];
}

/** A page of `readTypes` (event-store.capabilities.ts): its events, and the position through which the log was read. */
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
 * What some stores can do beyond this (one transaction across streams, a stream held for a
 * decision, reads filtered by type, counts, snapshots, an observer of their writes) is told by the
 * capabilities of `event-store.capabilities.ts`; its free functions (`appendToStream`, `appendAll`,
 * `appendHolding`, `readTypes`, `countAfter`, `countByType`) use them where a store has them.
 *
 * Leaves out: system events of the backend, stream deletion, event-type filters.
 */
export abstract class EventStore {
  abstract readonly backend: string;

  /**
   * Appends to several distinct streams, each at its expected revision, their events in the order
   * given, and answers each append's result in that order. A store that is `atomicAcrossStreams`
   * does it in one transaction: if a stream is not at its expected revision, throws that stream's
   * {@link WrongExpectedRevision} (the first in the order given) and writes nothing. A store
   * without such transactions appends one after the other, so a refusal leaves those before it
   * written. One append alone is the store's plain append (as cheap as it has one).
   */
  abstract appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]>;

  /**
   * The events of a stream in order, from revision `fromRevision` (0, the whole stream, when not
   * given); an empty array when the stream does not exist or has nothing from there.
   */
  abstract readStream(streamId: string, fromRevision?: StreamRevision): Promise<RecordedEvent[]>;

  /** Up to `maxCount` events strictly after `after` (or from the start), in log order. */
  abstract readAll(options: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]>;

  /** Catch-up subscription: history after `after`, then live events, in order. */
  abstract subscribe(options: SubscribeOptions): LogSubscription;

  /** Position of the newest event, or null for an empty log. */
  abstract head(): Promise<LogPosition | null>;

  /** Cheap liveness probe for /health. */
  abstract ping(): Promise<void>;

  abstract close(): Promise<void>;
}
