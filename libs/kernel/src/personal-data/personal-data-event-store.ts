import {
  AppendResult,
  EventStore,
  LogPosition,
  LogSubscription,
  NewEvent,
  RecordedEvent,
  StoreObserver,
  StreamAppend,
  StreamRevision,
  SubscribeOptions,
  TypesPage,
  TypesRead,
} from '../ports/event-store.port';
import {
  appendHolding,
  appendWithViews,
  InlineViews,
  writesViews,
  WritesViews,
  AtomicAcrossStreams,
  countAfter,
  countByType,
  CountsEvents,
  HoldsStreams,
  isAtomicAcrossStreams,
  KeepsSnapshots,
  ObservedStore,
  observerOf,
  readTypes,
  ReadsTypes,
  snapshotsOf,
  warmUp,
  WarmsUp,
} from '../ports/event-store.capabilities';
import type { SnapshotStore } from '../ports/snapshot-store.port';
import { NotFound } from '../errors';
import type { PersonalKeyStore } from '../ports/personal-key-store.port';
import { LoopSlices } from '../loop-slices';
import { RecentMap } from '../recent-map';
import {
  holdsPersonalValues,
  openPersonalData,
  personalEnvelope,
  PersonalFields,
  personalOwner,
  sealPersonalData,
} from './personal-fields';

/** Users whose keys (or erasure) one process keeps at hand. */
const KEYS_KEPT = 20_000;
/** Bytes of personal data sealed or opened in one turn of the event loop (a bulk job's many megabytes leave other requests their turns). */
const SEALED_A_SLICE = 1024 * 1024;
/** How long a process uses a key it read without asking again: another process's erasure reaches it within this. */
const KEY_TRUSTED_MS = 5_000;

/** A write of personal data about a user whose personal data was erased: that user is no one now. */
export class PersonalDataErased extends NotFound {
  constructor(readonly userId: string) {
    super(`user ${userId} not found: their personal data was erased`);
  }
}

/** A key as this process knows it: read at some time, or known erased (for good). */
type KnownKey = { key: Buffer; until: number } | 'erased';

/** What tells the log that a user's personal data was erased: event types, each with whose. */
export type ErasureEvents = ReadonlyMap<string, (data: Record<string, unknown>) => string>;

/**
 * The event log as the service reads and writes it, with personal data encrypted under each user's
 * key: an append seals the personal values of the events that hold some (see {@link PersonalFields})
 * with their owner's key, made on first use (about an erased owner, the event is refused or written
 * without them); every read opens them again, or, once the owner's key is erased, leaves their
 * places null. A key read is used for {@link KEY_TRUSTED_MS} before it is asked again, so another
 * process's erasure reaches this one within that time (or at once, when it reads the erasure). Everything else passes to the log as it is; the log's own
 * store (`inner`) holds only ciphertext, and is what the history seal hashes. Every capability of
 * the inner store is its too: one it lacks is done as the port's free functions do without it.
 */
export class PersonalDataEventStore
  extends EventStore
  implements AtomicAcrossStreams, HoldsStreams, ReadsTypes, CountsEvents, KeepsSnapshots, ObservedStore, WarmsUp, WritesViews
{
  readonly backend: string;
  /** Each user's key as last read, or its erasure. */
  private readonly keys = new RecentMap<string, KnownKey>(KEYS_KEPT);

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
  }

  get atomicAcrossStreams(): boolean {
    return isAtomicAcrossStreams(this.inner);
  }

  get snapshots(): SnapshotStore | null {
    return snapshotsOf(this.inner);
  }

  get observer(): StoreObserver | null {
    return observerOf(this.inner);
  }

  /** Appends without personal data go to the log as they are, with no turn of the event loop spent on them. */
  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (!appends.some(({ events }) => events.some((event) => this.fields.has(event.type)))) return this.inner.appendToStreams(appends);
    return this.sealedAppends(appends).then((sealed) => this.inner.appendToStreams(sealed));
  }

  get writesViews(): boolean {
    return writesViews(this.inner);
  }

  /** The views as given: they hold what every reader of the views sees (opened, as the projections fold it). */
  async appendWithViews(
    appends: readonly StreamAppend[],
    views: InlineViews,
  ): Promise<{ results: AppendResult[]; written: ReadonlySet<string> }> {
    return appendWithViews(this.inner, await this.sealedAppends(appends), views);
  }

  appendHolding(held: string, decide: () => Promise<readonly StreamAppend[]>): Promise<AppendResult[]> {
    return appendHolding(this.inner, held, async () => this.sealedAppends(await decide()));
  }

  private async sealedAppends(appends: readonly StreamAppend[]): Promise<StreamAppend[]> {
    const sealed: StreamAppend[] = [];
    for (const { streamId, events, expected } of appends) sealed.push({ streamId, events: await this.sealed(events), expected });
    return sealed;
  }

  /**
   * The events with their personal values sealed under their owners' keys (refused about an erased
   * owner, unless dropped); as given when none has any. An event of a personal type that holds no
   * personal value (a purchase without a shipping address) is no personal data: no key is read for it.
   * Many megabytes of it (a bulk job's items) are sealed with a turn of the event loop after each megabyte.
   */
  private async sealed(events: NewEvent[]): Promise<NewEvent[]> {
    if (!events.some((event) => this.fields.has(event.type))) return events;
    const sealed: NewEvent[] = [];
    const slices = new LoopSlices(SEALED_A_SLICE);
    for (const event of events) {
      const owner = holdsPersonalValues(this.fields, event) ? personalOwner(this.fields, event) : null;
      if (owner === null) {
        sealed.push(event);
        continue;
      }
      const key = await this.writingKey(owner);
      if (!key && this.fields.get(event.type)!.whenErased !== 'drop') throw new PersonalDataErased(owner);
      const done = sealPersonalData(this.fields, event, key);
      sealed.push(done);
      await slices.spend(personalEnvelope(done)?.box.length ?? 0);
    }
    return sealed;
  }

  async readStream(streamId: string, fromRevision?: StreamRevision): Promise<RecordedEvent[]> {
    return this.open(await this.inner.readStream(streamId, fromRevision));
  }

  async readAll(options: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    return this.open(await this.inner.readAll(options));
  }

  async readTypes(options: TypesRead): Promise<TypesPage> {
    const page = await readTypes(this.inner, options);
    return { events: await this.open(page.events), through: page.through };
  }

  countByType(): Promise<Map<string, number>> {
    return countByType(this.inner);
  }

  countAfter(after: LogPosition | null, limit?: number): Promise<number> {
    return countAfter(this.inner, after, limit);
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    // A subscriber that names the types it reads gets only those opened: every projection subscribes, and
    // opening every event's personal data for each of them (a job's sealed items among them) was most of their work.
    const reads = options.types ? new Set(options.types) : undefined;
    return this.inner.subscribe({ ...options, onEvents: async (events) => options.onEvents(await this.open(events, reads)) });
  }

  head(): Promise<LogPosition | null> {
    return this.inner.head();
  }

  warmUp(): void {
    warmUp(this.inner);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  /** Closes the log, then its keys. */
  async close(): Promise<void> {
    await this.inner.close();
    await this.keyStore.close();
  }

  /** Deletes a user's key for good: every event of theirs reads with its personal values gone from then on. */
  async erase(userId: string, erasedAt: Date): Promise<void> {
    await this.keyStore.erase(userId, erasedAt);
    this.keys.set(userId, 'erased');
  }

  /** Whether a user's key is erased (read from the store, not this process's memory). */
  async isErased(userId: string): Promise<boolean> {
    return (await this.keyStore.keyOf(userId)).erased;
  }

  /** Which of these users still have a key kept (read from the store). */
  keptOf(userIds: readonly string[]): Promise<string[]> {
    return this.keyStore.keptOf(userIds);
  }

  /** The key to seal a user's new personal data with, made on first use; null once the user's data was erased. */
  private async writingKey(userId: string): Promise<Buffer | null> {
    const known = this.keys.get(userId);
    if (known === 'erased') return null;
    if (known && known.until > Date.now()) return known.key;
    const key = await this.keyStore.keyFor(userId);
    // An erasure heard meanwhile stands: the key read before it is not trusted again.
    if (this.keys.get(userId) === 'erased') return null;
    this.keys.set(userId, key ? { key, until: Date.now() + KEY_TRUSTED_MS } : 'erased');
    return key;
  }

  /** The key to open a user's personal data with; null once erased (or, wrongly, never kept: said, not remembered). */
  private async readingKey(userId: string): Promise<Buffer | null> {
    const known = this.keys.get(userId);
    if (known === 'erased') return null;
    if (known && known.until > Date.now()) return known.key;
    const { key, erased } = await this.keyStore.keyOf(userId);
    if (this.keys.get(userId) === 'erased') return null;
    if (key) this.keys.set(userId, { key, until: Date.now() + KEY_TRUSTED_MS });
    else if (erased) this.keys.set(userId, 'erased');
    else
      this.warn(
        `user ${userId}: no personal-data key is kept, and the user was not erased: their personal data reads as gone (a keys file restored older than the log?)`,
      );
    return key;
  }

  /**
   * The events with their personal data opened (the same array and objects when none holds any);
   * with `reads`, only the events of those types (the others are left as stored); a turn of the
   * event loop after each megabyte opened.
   */
  private async open(events: RecordedEvent[], reads?: ReadonlySet<string>): Promise<RecordedEvent[]> {
    // Every owner's key asked at once: a store on a server reads them in one statement.
    const owners = new Set<string>();
    for (const event of events) {
      const envelope = !reads || reads.has(event.type) ? personalEnvelope(event) : null;
      if (envelope) owners.add(envelope.owner);
    }
    const keys =
      owners.size === 0
        ? new Map<string, Buffer | null>()
        : new Map(await Promise.all([...owners].map(async (owner) => [owner, await this.readingKey(owner)] as const)));
    let opened = events;
    const slices = new LoopSlices(SEALED_A_SLICE);
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      const erased = this.erasures.get(event.type);
      // Another process may have erased the key this one keeps: the log says so to every reader.
      if (erased) this.keys.set(erased(event.data as Record<string, unknown>), 'erased');
      const envelope = !reads || reads.has(event.type) ? personalEnvelope(event) : null;
      if (!envelope) continue;
      if (opened === events) opened = events.slice();
      // An erasure earlier in these events leaves the owner's later ones without their data.
      const key = this.keys.get(envelope.owner) === 'erased' ? null : keys.get(envelope.owner)!;
      try {
        opened[i] = openPersonalData(event, key);
      } catch (error) {
        // A box that does not open was altered: its values read as gone (the history's verification names the event).
        this.warn(`event ${event.id} (${event.type}): its personal data does not open: ${String(error)}`);
        opened[i] = openPersonalData(event, null);
      }
      await slices.spend(envelope.box.length);
    }
    return opened;
  }
}

/** The log's own store under the personal-data layer, if there is one: what the seal hashes and proves. */
export const storedLog = (store: EventStore): EventStore => (store instanceof PersonalDataEventStore ? store.inner : store);
