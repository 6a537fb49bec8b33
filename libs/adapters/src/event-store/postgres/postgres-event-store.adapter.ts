import { servicePool } from '../../postgres-pool';
import {
  AppendResult,
  AtomicAcrossStreams,
  checkStreamAppends,
  CountsEvents,
  EventStore,
  HoldsStreams,
  InlineViews,
  KeepsSnapshots,
  LogPosition,
  LogSubscription,
  ObservedStore,
  ReadsTypes,
  RecordedEvent,
  SnapshotStore,
  StoreObserver,
  StreamAppend,
  StreamRevision,
  SubscribeOptions,
  TypesPage,
  TypesRead,
  WritesViews,
} from '@deals/kernel';
import { Pool } from 'pg';
import { PostgresLogSchema } from './postgres-event-log.schema';
import { POOL_SIZE, PostgresGroupCommit } from './postgres-event-log.group-commit';
import { PostgresLogReads } from './postgres-event-log.reads';
import { FeedSource, POLL_MS, PostgresLogFeed } from './postgres-event-log.subscription';
import type { InlineViewTables } from './inline-views';

export type { InlineViewTables } from './inline-views';

export interface PostgresEventStoreOptions {
  /** How often a subscription looks for new events without a notification. */
  pollMs?: number;
  /** Told of every append acknowledged and every group committed. */
  observer?: StoreObserver | null;
}

/**
 * The EventStore on PostgreSQL (`DATABASE_URL`): one `events` table, one row per stream holding its
 * revision and its last writer (the expected-revision check, under the row's lock), each group of
 * appends one transaction acknowledged once PostgreSQL has committed it (its own fsync); appends of
 * every process write at once, in the order of their transactions (see `positionOf`);
 * subscriptions wake on LISTEN/NOTIFY and poll. Its parts: the schema, the group commit (and the
 * hold of a stream), the reads and the subscriptions, each in a file of its own.
 */
export class PostgresEventStore
  extends EventStore
  implements AtomicAcrossStreams, HoldsStreams, ReadsTypes, CountsEvents, KeepsSnapshots, ObservedStore, FeedSource, WritesViews
{
  readonly backend = 'postgresql';
  readonly atomicAcrossStreams = true;
  /** Where snapshots of long streams are kept beside this log (set by whoever opens it). */
  snapshots: SnapshotStore | null = null;
  readonly observer: StoreObserver | null;
  /** How often a subscription looks for new events without a notification. */
  readonly pollMs: number;
  private readonly pool: Pool;
  private closed = false;
  private readonly reads: PostgresLogReads;
  private readonly groups: PostgresGroupCommit;
  private readonly feed: PostgresLogFeed;
  /** Where {@link appendWithViews} writes documents: the view store of the same database, once given. */
  private inlineViews: InlineViewTables | null = null;

  constructor(
    private readonly url: string,
    options: PostgresEventStoreOptions = {},
  ) {
    super();
    this.pollMs = options.pollMs ?? POLL_MS;
    if (!(this.pollMs >= 1)) throw new Error(`pollMs must be at least 1 ms, not ${options.pollMs}`);
    this.observer = options.observer ?? null;
    this.pool = servicePool(url, POOL_SIZE);
    // A client lost while idle is dropped by the pool; the error must not crash the process.
    const schema = new PostgresLogSchema(this.pool);
    this.reads = new PostgresLogReads(this.pool, url, schema);
    this.groups = new PostgresGroupCommit(this.pool, schema, this.observer, () => this.inlineViews);
    this.feed = new PostgresLogFeed(url, this, () => this.wakeAll());
  }

  /** The appends as one unit of a group: written in its transaction only if every one of them is at its expected revision. */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    checkStreamAppends(appends);
    return this.groups.enqueue(appends);
  }

  /** Writes the documents given with appends into `views`' tables, in the appends' transaction (the same database). */
  writeViewsInto(views: InlineViewTables): void {
    this.inlineViews = views;
  }

  get writesViews(): boolean {
    return this.inlineViews !== null;
  }

  /**
   * The appends as one unit of a group, with the documents `views` written in the group's statement
   * when it is the one-statement kind (streams named once in the group; else, or when held, the
   * documents are left out); `written`: those it wrote (see `inlineWrites`).
   */
  async appendWithViews(
    appends: readonly StreamAppend[],
    views: InlineViews,
  ): Promise<{ results: AppendResult[]; written: ReadonlySet<string> }> {
    checkStreamAppends(appends);
    let written: ReadonlySet<string> = new Set();
    const results = await this.groups.enqueue(
      appends,
      this.inlineViews && views.length ? views : undefined,
      (documents) => (written = documents),
    );
    return { results, written };
  }

  appendHolding(held: string, decide: () => Promise<readonly StreamAppend[]>): Promise<AppendResult[]> {
    return this.groups.appendHolding(held, decide);
  }

  readStream(streamId: string, fromRevision: StreamRevision = 0): Promise<RecordedEvent[]> {
    return this.reads.readStream(streamId, fromRevision);
  }

  /**
   * Events after `after` in the log's order, up to the oldest transaction still running (see
   * `positionOf`): an event committed above it is read once every transaction before it has
   * ended, so no page is ever followed by an event that belongs before it.
   */
  async readAll({ after, maxCount }: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    return (await this.readPage(after, maxCount)).events;
  }

  /** A page of the log, and whether events committed after it are held back (see `PostgresLogReads.readPage`). */
  readPage(after: LogPosition | null, maxCount: number): Promise<{ events: RecordedEvent[]; heldBack: boolean }> {
    return this.reads.readPage(after, maxCount);
  }

  readTypes(read: TypesRead): Promise<TypesPage> {
    return this.reads.readTypes(read);
  }

  countAfter(after: LogPosition | null, limit = Number.POSITIVE_INFINITY): Promise<number> {
    return this.reads.countAfter(after, limit);
  }

  countByType(): Promise<Map<string, number>> {
    return this.reads.countByType();
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    return this.feed.subscribe(options);
  }

  /** Resolves once the store listens for the appends' notices (see `PostgresLogFeed.listen`). */
  listen(): Promise<void> {
    return this.feed.listen();
  }

  private wakeAll(): void {
    this.feed.wakeUp();
  }

  head(): Promise<LogPosition | null> {
    return this.reads.head();
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    // Closing twice is closing once.
    if (this.closed) return;
    this.closed = true;
    await this.feed.close();
    await this.pool.end();
  }
}
