import { randomUUID } from 'node:crypto';
import {
  AppendResult,
  checkStreamAppends,
  EventStore,
  ExpectedRevision,
  LogPosition,
  LogSubscription,
  NewEvent,
  RecordedEvent,
  SnapshotStore,
  StreamAppend,
  SubscribeOptions,
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
 */
export class MemoryEventStore extends EventStore {
  readonly backend = 'memory';
  /** Events a subscription delivers at most at once. */
  pageSize = 500;
  private readonly wakers = new Set<() => void>();

  constructor(
    readonly log: MemoryLog = { streams: new Map(), last: 0 },
    snapshots: SnapshotStore | null = null,
    private readonly checksRevision = true,
  ) {
    super();
    this.snapshots = snapshots;
  }

  get streams(): Map<string, RecordedEvent[]> {
    return this.log.streams;
  }

  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.check(streamId, expected);
    const last = this.push(streamId, events);
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  override readonly atomicAcrossStreams = true;

  /** Every append checked first, then all written (or none). */
  override async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    checkStreamAppends(appends);
    for (const { streamId, expected } of appends) this.check(streamId, expected);
    return appends.map(({ streamId, events }) => {
      const last = this.push(streamId, events);
      return { nextExpectedRevision: last.revision, position: last.position };
    });
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
