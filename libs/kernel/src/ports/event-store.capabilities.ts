import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  LogPosition,
  NewEvent,
  RecordedEvent,
  StoreObserver,
  StreamAppend,
  TypesPage,
  TypesRead,
} from './event-store.port';
import type { SnapshotStore } from './snapshot-store.port';
import type { ViewDocument } from './view-store.port';

/*
 * What some event stores can do beyond the port, each a small interface a store implements or not,
 * and the free functions that use it where a store has it and do without it (as the port allows)
 * where it has not. A store that wraps another (the personal-data layer) passes on each one its
 * inner store has.
 */

/** A store whose {@link EventStore.appendToStreams} is one transaction (all of its appends written, or none). */
export interface AtomicAcrossStreams {
  readonly atomicAcrossStreams: boolean;
}

/** Whether the store's appends to several streams are one transaction; a store that does not say appends them one after the other. */
export const isAtomicAcrossStreams = (store: EventStore): boolean => (store as Partial<AtomicAcrossStreams>).atomicAcrossStreams === true;

/** A store that can hold a stream's writes for a decision (see {@link appendHolding}). */
export interface HoldsStreams {
  appendHolding(held: string, decide: () => Promise<readonly StreamAppend[]>): Promise<AppendResult[]>;
}

/** A store that reads the events of some types where it reads (see {@link readTypes}). */
export interface ReadsTypes {
  readTypes(read: TypesRead): Promise<TypesPage>;
}

/** A store that counts its events without reading them (see {@link countAfter}, {@link countByType}). */
export interface CountsEvents {
  countAfter(after: LogPosition | null, limit?: number): Promise<number>;
  countByType(): Promise<Map<string, number>>;
}

/** A store with snapshots of long streams kept beside it (`handleCommand` uses them). */
export interface KeepsSnapshots {
  readonly snapshots: SnapshotStore | null;
}

/** A store with threads or connections its first append would start, which a serving process starts as it boots instead. */
export interface WarmsUp {
  warmUp(): void;
}

/** A store given an observer as it was opened, told of what it writes (and by the command engine, of its contention). */
export interface ObservedStore {
  readonly observer: StoreObserver | null;
}

/**
 * A document of an inline projection, written in the transaction of the appends whose events it
 * was folded from: only over the stored document it was folded from (`base`, that document's
 * position; null: one these appends begin, written only where none is stored), and only into the
 * generation of its collection that readers use. Folded from events not yet written, its `_pos` is
 * `PENDING_POSITION`, which the write replaces with the position of the appends' last event.
 */
export interface InlineDocument {
  doc: ViewDocument;
  base: LogPosition | null;
}

/** Inline projections' documents, by collection (see {@link InlineDocument}). */
export type InlineViews = ReadonlyArray<{ collection: string; documents: readonly InlineDocument[] }>;

/** A store whose views live on its own server, written in its appends' transactions (see {@link appendWithViews}). */
export interface WritesViews {
  /** Whether documents can be written with appends (the views of the same server were given to it). */
  readonly writesViews: boolean;
  /** The appends with `views`; `written`: the documents written (`<collection> <id>`), the others were not. */
  appendWithViews(appends: readonly StreamAppend[], views: InlineViews): Promise<{ results: AppendResult[]; written: ReadonlySet<string> }>;
}

/** Whether the store writes inline projections' documents in its appends' transactions. */
export const writesViews = (store: EventStore): boolean => (store as Partial<WritesViews>).writesViews === true;

/** The key of an inline document in {@link WritesViews.appendWithViews}' answer. */
export const inlineKey = (collection: string, id: string): string => `${collection} ${id}`;

/**
 * Writes the appends with `views` in their transaction where the store can ({@link writesViews}),
 * answering which documents were written; else the appends alone, and none written.
 */
export async function appendWithViews(
  store: EventStore,
  appends: readonly StreamAppend[],
  views: InlineViews,
): Promise<{ results: AppendResult[]; written: ReadonlySet<string> }> {
  if (views.length && writesViews(store)) return (store as unknown as WritesViews).appendWithViews(appends, views);
  return { results: await appendAll(store, appends), written: new Set() };
}

/** Whether the store has this method of a capability. */
const has = (store: EventStore, method: string): boolean => typeof (store as unknown as Record<string, unknown>)[method] === 'function';

/** Where snapshots of long streams are kept beside this log, if anywhere. */
export const snapshotsOf = (store: EventStore): SnapshotStore | null => (store as Partial<KeepsSnapshots>).snapshots ?? null;

/** The observer the store was given, if any. */
export const observerOf = (store: EventStore): StoreObserver | null => (store as Partial<ObservedStore>).observer ?? null;

/** Starts what the store's first append would start, where it has such a thing (the embedded log's write thread). */
export function warmUp(store: EventStore): void {
  if (has(store, 'warmUp')) (store as EventStore & WarmsUp).warmUp();
}

/** Appends events to one stream at its expected revision: `appendToStreams` with that one append. */
export async function appendToStream(
  store: EventStore,
  streamId: string,
  events: NewEvent[],
  expected: ExpectedRevision,
): Promise<AppendResult> {
  return (await store.appendToStreams([{ streamId, events, expected }]))[0];
}

/** Writes the appends as `appendToStreams` does (one alone as the store's plain append), and nothing when none. */
export async function appendAll(store: EventStore, appends: readonly StreamAppend[]): Promise<AppendResult[]> {
  if (appends.length === 0) return [];
  return store.appendToStreams(appends);
}

/**
 * Writes the appends `decide` returns (none: nothing) with `held`'s writes held for them: no other
 * process appends to that stream from the moment `decide` is called until they are written, so
 * what `decide` reads of it is what the write will find. A process that keeps losing the race on
 * a contended stream to one that decides on its cached state takes its turn this way. A store
 * without such a hold: `decide`, then the appends as {@link appendAll} writes them.
 */
export async function appendHolding(
  store: EventStore,
  held: string,
  decide: () => Promise<readonly StreamAppend[]>,
): Promise<AppendResult[]> {
  if (has(store, 'appendHolding')) return (store as EventStore & HoldsStreams).appendHolding(held, decide);
  return appendAll(store, await decide());
}

/**
 * Up to `maxCount` events of `types` strictly after `after`, in log order, and the position
 * `through` which the log has been read: the last event's when the page is full, else the end of
 * the log as far as it can be read now (no event committed later goes before it), `after` for a
 * log with nothing more. A reader of a few types goes on from `through` and passes the rest of
 * the log once. A store that can filter where it reads does; else {@link readTypesByPages}.
 */
export function readTypes(store: EventStore, read: TypesRead): Promise<TypesPage> {
  if (has(store, 'readTypes')) return (store as EventStore & ReadsTypes).readTypes(read);
  return readTypesByPages(store, read);
}

/** {@link readTypes} for a store that cannot filter: pages of `readAll`, filtered here. */
export async function readTypesByPages(store: EventStore, { after, maxCount, types }: TypesRead): Promise<TypesPage> {
  const wanted = new Set(types);
  const events: RecordedEvent[] = [];
  let through = after;
  while (events.length < maxCount) {
    const page = await store.readAll({ after: through, maxCount: Math.max(maxCount, 1000) });
    if (page.length === 0) break;
    for (const event of page) {
      through = event.position;
      if (wanted.has(event.type) && events.push(event) === maxCount) break;
    }
  }
  return { events, through };
}

/**
 * How many events the log holds after `after` (from the start when null), counting up to `limit`
 * when given. A store that can count cheaply does; else the log is read page by page.
 */
export function countAfter(store: EventStore, after: LogPosition | null, limit = Number.POSITIVE_INFINITY): Promise<number> {
  if (has(store, 'countAfter')) return (store as EventStore & CountsEvents).countAfter(after, limit);
  return countAfterByPages(store, after, limit);
}

async function countAfterByPages(store: EventStore, after: LogPosition | null, limit: number): Promise<number> {
  let count = 0;
  let from = after;
  while (count < limit) {
    const page = await store.readAll({ after: from, maxCount: Math.min(5000, limit - count) });
    if (page.length === 0) break;
    count += page.length;
    from = page[page.length - 1].position;
  }
  return count;
}

/** How many events of each type the log holds. A store that can count cheaply does; else the whole log is read. */
export function countByType(store: EventStore): Promise<Map<string, number>> {
  if (has(store, 'countByType')) return (store as EventStore & CountsEvents).countByType();
  return countByTypeByPages(store);
}

async function countByTypeByPages(store: EventStore): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (let after: LogPosition | null = null; ;) {
    const page = await store.readAll({ after, maxCount: 5000 });
    if (page.length === 0) return counts;
    for (const event of page) counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
    after = page[page.length - 1].position;
  }
}

/** Counts the appends a store acknowledged in this process, as its observer (or one of them). */
export class AppendsCounted implements StoreObserver {
  count = 0;

  appended(): void {
    this.count++;
  }

  committed(): void {}
}

/** One observer that tells each of `observers` in turn (those given as null left out). */
export function observingAll(...observers: Array<StoreObserver | null | undefined>): StoreObserver {
  const all = observers.filter((o): o is StoreObserver => !!o);
  return {
    appended: (events) => all.forEach((o) => o.appended(events)),
    committed: (appends, seconds) => all.forEach((o) => o.committed(appends, seconds)),
    contended: (outcome) => all.forEach((o) => o.contended?.(outcome)),
  };
}
