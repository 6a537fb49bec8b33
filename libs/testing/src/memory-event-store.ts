import { randomUUID } from 'node:crypto';
import {
  appendAll,
  AppendResult,
  AtomicAcrossStreams,
  checkStreamAppends,
  EventStore,
  ExpectedRevision,
  LogPosition,
  LogSubscription,
  NewEvent,
  RecordedEvent,
  HoldsStreams,
  KeepsSnapshots,
  ObservedStore,
  ReadsTypes,
  readTypesByPages,
  SnapshotStore,
  StoreObserver,
  StreamAppend,
  SubscribeOptions,
  TypesPage,
  TypesRead,
  WrongExpectedRevision,
} from '@deals/kernel';

/** A log in memory, which several stores (standing for processes) may share. */
export interface MemoryLog {
  streams: Map<string, RecordedEvent[]>;
  last: number;
}

/**
 * Enough of an event store for the kernel's specs: append (checking the expected revision unless
 * told not to), read a stream, read the log and subscribe to it (pages of `pageSize`, a failed
 * delivery retried from the last delivered position); `elsewhere` appends as another process
 * would, behind this one's cache and unseen by spies on `append`. Not a port adapter: not durable.
 * Its appends to several streams are one write; its hold of a stream and its reads of some types
 * are what a store without them does (kept as its own methods, for specs to watch).
 */
export class MemoryEventStore extends EventStore implements AtomicAcrossStreams, HoldsStreams, ReadsTypes, KeepsSnapshots, ObservedStore {
  readonly backend = 'memory';
  readonly atomicAcrossStreams = true;
  /** Events a subscription delivers at most at once. */
  pageSize = 500;
  private readonly wakers = new Set<() => void>();

  constructor(
    readonly log: MemoryLog = { streams: new Map(), last: 0 },
    public snapshots: SnapshotStore | null = null,
    private readonly checksRevision = true,
    /** Told of contention by the command engine (this store reports no appends of its own). */
    readonly observer: StoreObserver | null = null,
  ) {
    super();
  }

  get streams(): Map<string, RecordedEvent[]> {
    return this.log.streams;
  }

  /** One stream's append (what `appendToStreams` does with one). */
  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.check(streamId, expected);
    const last = this.push(streamId, events);
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  /** Every append checked first, then all written (or none). */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    checkStreamAppends(appends);
    if (appends.length === 1) return [await this.append(appends[0].streamId, appends[0].events, appends[0].expected)];
    for (const { streamId, expected } of appends) this.check(streamId, expected);
    return appends.map(({ streamId, events }) => {
      const last = this.push(streamId, events);
      return { nextExpectedRevision: last.revision, position: last.position };
    });
  }

  /** `decide`, then its appends: no hold. */
  async appendHolding(_held: string, decide: () => Promise<readonly StreamAppend[]>): Promise<AppendResult[]> {
    return appendAll(this, await decide());
  }

  readTypes(read: TypesRead): Promise<TypesPage> {
    return readTypesByPages(this, read);
  }

  async readStream(streamId: string, fromRevision = 0): Promise<RecordedEvent[]> {
    return (this.log.streams.get(streamId) ?? []).slice(fromRevision);
  }

  /** Throws unless the stream is at `expected` (or revisions go unchecked). */
  private check(streamId: string, expected: ExpectedRevision): void {
    const stream = this.log.streams.get(streamId) ?? [];
    const actual = stream.length ? stream.length - 1 : 'no_stream';
    if (this.checksRevision && expected !== 'any' && expected !== actual) throw new WrongExpectedRevision(streamId, expected, actual);
  }

  /** Another process's append of these events. */
  elsewhere(streamId: string, ...events: Array<{ type: string; data: unknown }>): RecordedEvent {
    return this.push(
      streamId,
      events.map((e) => ({ id: randomUUID(), ...e, metadata: { occurredAt: '2026-01-01T00:00:00.000Z' } })),
    );
  }

  private push(streamId: string, events: NewEvent[]): RecordedEvent {
    const stream = this.log.streams.get(streamId) ?? [];
    this.log.streams.set(streamId, stream);
    for (const e of events) stream.push({ ...e, streamId, revision: stream.length, position: String(++this.log.last).padStart(12, '0') });
    for (const wake of this.wakers) wake();
    return stream[stream.length - 1];
  }

  async readAll({ after, maxCount }: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    return [...this.log.streams.values()]
      .flat()
      .filter((e) => after === null || e.position > after)
      .sort((a, b) => (a.position < b.position ? -1 : 1))
      .slice(0, maxCount);
  }

  subscribe({ after, onEvents, onError }: SubscribeOptions): LogSubscription {
    let position = after;
    let closed = false;
    let wake: () => void = () => undefined;
    const waker = () => wake();
    this.wakers.add(waker);
    const loop = (async () => {
      while (!closed) {
        try {
          const page = await this.readAll({ after: position, maxCount: this.pageSize });
          if (page.length) {
            await onEvents(page);
            position = page[page.length - 1].position;
            continue;
          }
        } catch (error) {
          onError?.(error);
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 20);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    })();
    return {
      close: async () => {
        closed = true;
        this.wakers.delete(waker);
        wake();
        await loop;
      },
    };
  }

  async head() {
    return (await this.readAll({ after: null, maxCount: Number.MAX_SAFE_INTEGER })).at(-1)?.position ?? null;
  }
  async ping() {}
  async close() {}
}
