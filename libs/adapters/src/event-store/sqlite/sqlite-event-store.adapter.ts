import {
  AppendResult,
  AtomicAcrossStreams,
  checkStreamAppends,
  CountsEvents,
  EventStore,
  KeepsSnapshots,
  LogPosition,
  LogSubscription,
  ObservedStore,
  ReadsTypes,
  RecordedEvent,
  SnapshotStore,
  StoreObserver,
  StreamAppend,
  SubscribeOptions,
  TypesPage,
  TypesRead,
  WarmsUp,
} from '@deals/kernel';
import Database from 'better-sqlite3';
import { openDurableDatabase } from '../../sqlite/open-durable-database';
import type { SqliteWriteThread } from '../../sqlite/write-thread';
import { EVENTS_SCHEMA } from './sqlite-event-log.writes';
import { positionNumber, sqlitePosition, SqliteLogReads, toRecorded } from './sqlite-event-log.reads';
import { SqliteLogFeed } from './sqlite-event-log.subscription';
import { SqliteLogAppends } from './sqlite-event-log.append';

export { SQLITE_POSITION_WIDTH } from './sqlite-event-log.reads';

export interface SqliteEventStoreOptions {
  /** Told of every append acknowledged and every group committed. */
  observer?: StoreObserver | null;
}

/**
 * The embedded event log: one SQLite file in WAL mode with `synchronous=FULL`, so an append is
 * acknowledged only once it is on disk. Appends go to a write thread that commits them in
 * pipelined groups (one `BEGIN IMMEDIATE` transaction and one sync for every append that arrived
 * while the previous group was being written): the disk allows a few thousand syncs a second, one
 * sync per append would cap the whole service there, and a sync on the main thread would stall
 * every request meanwhile. A conflict fails only its own append. Reads use this thread's own
 * connection and see an append once it is acknowledged. Several processes (server and CLI) may
 * share the file; subscriptions see the other's appends within a poll (see `SqliteLogFeed`).
 */
export class SqliteEventStore
  extends EventStore
  implements AtomicAcrossStreams, ReadsTypes, CountsEvents, KeepsSnapshots, ObservedStore, WarmsUp
{
  readonly backend = 'sqlite';
  readonly atomicAcrossStreams = true;
  /** Where snapshots of long streams are kept beside this log (set by whoever opens it). */
  snapshots: SnapshotStore | null = null;
  readonly observer: StoreObserver | null;
  private readonly db: Database.Database;
  private readonly reads: SqliteLogReads;
  private readonly feed: SqliteLogFeed;
  private readonly appends: SqliteLogAppends;
  /** The appends' write thread. */
  private readonly writer: SqliteWriteThread;

  constructor(
    readonly file: string,
    options: SqliteEventStoreOptions = {},
  ) {
    super();
    this.observer = options.observer ?? null;
    this.db = openDurableDatabase(file);
    this.db.exec(EVENTS_SCHEMA);
    this.reads = new SqliteLogReads(this.db);
    this.feed = new SqliteLogFeed(this.reads);
    this.appends = new SqliteLogAppends(file, this.reads, this.feed, (appends, seconds) => this.observer?.committed(appends, seconds));
    this.writer = this.appends.writer;
  }

  /** One append alone goes as the write thread's program for one; several as one program, all or none. */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    checkStreamAppends(appends);
    if (appends.length === 1) {
      const result = await this.appends.appendOne(appends[0]);
      this.observer?.appended(appends[0].events);
      return [result];
    }
    const results = await this.appends.appendMany(appends);
    for (const { events } of appends) this.observer?.appended(events);
    return results;
  }

  async readStream(streamId: string, fromRevision = 0): Promise<RecordedEvent[]> {
    return this.reads.readStream(streamId, fromRevision);
  }

  async readAll({ after, maxCount }: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    return this.reads.rowsAfter(positionNumber(after), maxCount).map(toRecorded);
  }

  async readTypes(read: TypesRead): Promise<TypesPage> {
    return this.reads.readTypes(read);
  }

  async countByType(): Promise<Map<string, number>> {
    return this.reads.countByType();
  }

  async countAfter(after: LogPosition | null, limit = Number.POSITIVE_INFINITY): Promise<number> {
    return this.reads.countAfter(after, limit);
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    return this.feed.subscribe(options);
  }

  async head(): Promise<LogPosition | null> {
    const head = this.reads.headNumber();
    return head === null ? null : sqlitePosition(head);
  }

  /** Starts the write thread now (a serving process, as it boots), not on the first append. */
  warmUp(): void {
    this.writer.prestart();
  }

  async ping(): Promise<void> {
    this.reads.headNumber();
  }

  async close(): Promise<void> {
    await this.writer.close();
    this.db.close();
  }
}
