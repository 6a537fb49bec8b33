import {
  AppendResult,
  EventStore,
  ExpectedRevision,
  LogPosition,
  LogSubscription,
  NewEvent,
  RecordedEvent,
  StoreObserver,
  StreamRevision,
  SubscribeOptions,
} from '../ports/event-store.port';
import type { PersonalKeyStore } from '../ports/personal-key-store.port';
import { RecentMap } from '../recent-map';
import { openPersonalData, personalEnvelope, PersonalFields, personalOwner, sealPersonalData } from './personal-fields';

/** Users whose keys (or erasure) one process keeps at hand. */
const KEYS_KEPT = 20_000;

/** What tells the log that a user's personal data was erased: event types, each with whose. */
export type ErasureEvents = ReadonlyMap<string, (data: Record<string, unknown>) => string>;

/**
 * The event log as the service reads and writes it, with personal data encrypted under each user's
 * key: an append seals the personal values of the events that hold some (see {@link PersonalFields})
 * with their owner's key, made on first use (an erased owner's are not written at all); every read
 * opens them again, or, once the owner's key is erased, leaves their places null. Everything else passes to the log as it is; the log's own
 * store (`inner`) holds only ciphertext, and is what the history seal hashes.
 */
export class PersonalDataEventStore extends EventStore {
  readonly backend: string;
  /** Each user's key as last read, or null once erased. */
  private readonly keys = new RecentMap<string, Buffer | null>(KEYS_KEPT);

  constructor(
    readonly inner: EventStore,
    private readonly keyStore: PersonalKeyStore,
    private readonly fields: PersonalFields,
    private readonly erasures: ErasureEvents,
    /** Told of an event whose personal data does not open (altered in the store). */
    private readonly warn: (message: string) => void = () => {},
  ) {
    super();
    this.backend = inner.backend;
    this.snapshots = inner.snapshots;
  }

  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (!events.some((event) => this.fields.has(event.type))) return this.inner.append(streamId, events, expected);
    const sealed: NewEvent[] = [];
    for (const event of events) {
      const owner = personalOwner(this.fields, event);
      if (owner === null) {
        sealed.push(event);
        continue;
      }
      const key = await this.writingKey(owner);
      sealed.push(sealPersonalData(this.fields, event, key));
    }
    return this.inner.append(streamId, sealed, expected);
  }

  async readStream(streamId: string, fromRevision?: StreamRevision): Promise<RecordedEvent[]> {
    return this.open(await this.inner.readStream(streamId, fromRevision));
  }

  async readAll(options: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    return this.open(await this.inner.readAll(options));
  }

  override countAfter(after: LogPosition | null, limit?: number): Promise<number> {
    return this.inner.countAfter(after, limit);
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    return this.inner.subscribe({ ...options, onEvents: async (events) => options.onEvents(await this.open(events)) });
  }

  head(): Promise<LogPosition | null> {
    return this.inner.head();
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  override warmUp(): void {
    this.inner.warmUp();
  }

  override observe(observer: StoreObserver): void {
    this.inner.observe(observer);
  }

  /** Closes the log, then its keys. */
  async close(): Promise<void> {
    await this.inner.close();
    await this.keyStore.close();
  }

  /** Deletes a user's key for good: every event of theirs reads with its personal values gone from then on. */
  async erase(userId: string, erasedAt: Date): Promise<void> {
    await this.keyStore.erase(userId, erasedAt);
    this.keys.set(userId, null);
  }

  /** The key to seal a user's new personal data with, made on first use; null once the user's data was erased (none is written). */
  private async writingKey(userId: string): Promise<Buffer | null> {
    const known = this.keys.get(userId);
    if (known !== undefined) return known;
    const key = await this.keyStore.keyFor(userId);
    this.keys.set(userId, key);
    return key;
  }

  private async readingKey(userId: string): Promise<Buffer | null> {
    const known = this.keys.get(userId);
    if (known !== undefined) return known;
    const { key } = await this.keyStore.keyOf(userId);
    this.keys.set(userId, key);
    return key;
  }

  /** The events with their personal data opened (the same array and objects when none holds any). */
  private async open(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    let opened = events;
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      const erased = this.erasures.get(event.type);
      // Another process may have erased the key this one keeps: the log says so to every reader.
      if (erased) this.keys.set(erased(event.data as Record<string, unknown>), null);
      const envelope = personalEnvelope(event);
      if (!envelope) continue;
      if (opened === events) opened = events.slice();
      const key = await this.readingKey(envelope.owner);
      try {
        opened[i] = openPersonalData(event, key);
      } catch (error) {
        // A box that does not open was altered: its values read as gone (the history's verification names the event).
        this.warn(`event ${event.id} (${event.type}): its personal data does not open: ${String(error)}`);
        opened[i] = openPersonalData(event, null);
      }
    }
    return opened;
  }
}

/** The log's own store under the personal-data layer, if there is one: what the seal hashes and proves. */
export const storedLog = (store: EventStore): EventStore => (store instanceof PersonalDataEventStore ? store.inner : store);
