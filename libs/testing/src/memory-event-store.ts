import { randomUUID } from 'node:crypto';
import {
  AppendResult,
  EventStore,
  ExpectedRevision,
  LogSubscription,
  NewEvent,
  RecordedEvent,
  SnapshotStore,
  WrongExpectedRevision,
} from '@deals/kernel';

/** A log in memory, which several stores (standing for processes) may share. */
export interface MemoryLog {
  streams: Map<string, RecordedEvent[]>;
  last: number;
}

/**
 * Enough of an event store for the command engine's specs: append (checking the expected revision
 * unless told not to) and read a stream; `elsewhere` appends as another process would, behind this
 * one's cache and unseen by spies on `append`. Not a port adapter: no log reads or subscriptions.
 */
export class MemoryEventStore extends EventStore {
  readonly backend = 'memory';

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
    const stream = this.log.streams.get(streamId) ?? [];
    const actual = stream.length ? stream.length - 1 : 'no_stream';
    if (this.checksRevision && expected !== 'any' && expected !== actual) throw new WrongExpectedRevision(streamId, expected, actual);
    const last = this.push(streamId, events);
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  async readStream(streamId: string, fromRevision = 0): Promise<RecordedEvent[]> {
    return (this.log.streams.get(streamId) ?? []).slice(fromRevision);
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
    return stream[stream.length - 1];
  }

  readAll(): Promise<RecordedEvent[]> {
    throw new Error('not kept in memory');
  }
  subscribe(): LogSubscription {
    throw new Error('not kept in memory');
  }
  async head() {
    return null;
  }
  async ping() {}
  async close() {}
}
