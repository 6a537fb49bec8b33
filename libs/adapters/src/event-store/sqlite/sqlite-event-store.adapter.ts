import {
  AppendResult,
  checkStreamAppends,
  EventStore,
  ExpectedRevision,
  freezeJson,
  LogPosition,
  LogSubscription,
  NewEvent,
  RecordedEvent,
  StreamAppend,
  SubscribeOptions,
  TypesPage,
  TypesRead,
  WrongExpectedRevision,
  LoopSlices,
} from '@deals/kernel';
import Database from 'better-sqlite3';
import { EventEmitter } from 'node:events';
import { openDurableDatabase } from '../../sqlite/open-durable-database';
import { SqliteWriteThread, WriteOutcomeUnknown } from '../../sqlite/write-thread';
import { AppendAllReply, AppendReply, AppendWritten, decodeAppendReply, encodeAppend, EVENTS_SCHEMA } from './sqlite-event-log.writes';

interface Row {
  position: number;
  id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  /** An own append's event as the caller gave it, when {@link freezeJson} passed its data and metadata: decoded from it instead of the JSON. */
  given?: NewEvent;
}

/** Digits of a log position's text: zero-padded, so that positions compare as text in log order. */
export const SQLITE_POSITION_WIDTH = 20;
const sqlitePosition = (n: number | bigint): LogPosition => String(n).padStart(SQLITE_POSITION_WIDTH, '0');
const positionNumber = (p: LogPosition | null) => (p === null ? 0 : Number(p));

/** How often a subscription looks for events appended by another process (the CLI). */
const POLL_MS = 100;
const PAGE = 1000;
/** Characters of events' data encoded in one turn of the event loop. */
const ENCODED_A_SLICE = 1024 * 1024;
const WAL_LIMIT_BYTES = 64 * 1024 * 1024;
/** Rows of this process's own recent appends kept at most for the subscriptions (a few seconds' worth). */
const OWN_ROWS = 20_000;

/**
 * The embedded event log: one SQLite file in WAL mode with `synchronous=FULL`, so an append is
 * acknowledged only once it is on disk. Appends go to a write thread that commits them in
 * pipelined groups (one `BEGIN IMMEDIATE` transaction and one sync for every append that arrived
 * while the previous group was being written): the disk allows a few thousand syncs a second, one
 * sync per append would cap the whole service there, and a sync on the main thread would stall
 * every request meanwhile. A conflict fails only its own append. Reads use this thread's own
 * connection and see an append once it is acknowledged. Several processes (server and CLI) may
 * share the file; subscriptions see the other's appends within {@link POLL_MS}.
 */
export class SqliteEventStore extends EventStore {
  readonly backend = 'sqlite';
  private readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private readonly writer: SqliteWriteThread;
  /**
   * Pages the subscriptions read in this turn of the loop, by position: the projections follow the
   * log together, so one read and one decoding of a new page serves them all. Dropped at the end
   * of the turn and on every commit of this process (the page may have grown).
   */
  private readonly livePages = new Map<number, { events: RecordedEvent[]; own: boolean }>();
  /**
   * Rows this process appended lately, by position, exactly as the file holds them (an append's
   * events take consecutive positions, ending at the one its write reports). The subscriptions
   * read new pages from here rather than query the file for what this process just wrote; a
   * position missing here (another process's append, or one pruned) sends them to the file.
   * A row goes once every subscription has read it (at the latest when {@link OWN_ROWS} are kept):
   * kept for seconds, every row outlived the young generation's collections, and copying them to
   * the old one and collecting them there was much of the event loop's time spent on garbage.
   */
  private readonly ownRows = new Map<number, Row>();
  /** The JSON of metadata objects appended lately (frozen ones; cleared when full, see `metadataText`). */
  private readonly metadataTexts = new Map<object, string>();
  /** Where each open subscription has read to. */
  private readonly cursors = new Set<{ position: number }>();
  /** Commits of this process so far: a subscription busy delivering when one came knows to look again. */
  private commits = 0;
  private readonly statements: {
    readStream: Database.Statement;
    readAll: Database.Statement;
    readTypes: Database.Statement;
    countByType: Database.Statement;
    head: Database.Statement;
    eventInStream: Database.Statement;
    countAfter: Database.Statement;
  };

  constructor(readonly file: string) {
    super();
    this.db = openDurableDatabase(file);
    this.db.exec(EVENTS_SCHEMA);
    this.statements = {
      readStream: this.db.prepare('SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision'),
      readAll: this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      readTypes: this.db.prepare(
        'SELECT * FROM events WHERE position > ? AND position <= ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position LIMIT ?',
      ),
      countByType: this.db.prepare('SELECT type, count(*) AS n FROM events GROUP BY type'),
      head: this.db.prepare('SELECT MAX(position) FROM events').pluck(),
      eventInStream: this.db.prepare('SELECT position, revision FROM events WHERE stream_id = ? AND id = ?'),
      countAfter: this.db.prepare('SELECT count(*) FROM (SELECT 1 FROM events WHERE position > ? LIMIT ?)').pluck(),
    };
    this.appended.setMaxListeners(0);
    this.writer = new SqliteWriteThread({
      file,
      durability: 'full',
      programs: require.resolve('./sqlite-event-log.writes'),
      walLimitBytes: WAL_LIMIT_BYTES,
    });
    this.writer.onCommitted = (requests, seconds) => {
      this.reportCommitted(requests, seconds);
      this.commits++;
      this.livePages.clear();
      this.appended.emit('appended');
    };
  }

  override readonly atomicAcrossStreams = true;

  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const { rows, given } = await this.encode(events);
    const result = await this.appendRows({ streamId, expected, rows, given }, 2);
    this.reportAppended(events);
    return result;
  }

  /** One program of the write thread for all the appends: in one savepoint of its group, so all or none. */
  override async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    checkStreamAppends(appends);
    const encoded: EncodedAppend[] = [];
    for (const { streamId, events, expected } of appends) encoded.push({ streamId, expected, ...(await this.encode(events)) });
    const results = await this.appendAllRows(encoded, 2);
    for (const { events } of appends) this.reportAppended(events);
    return results;
  }

  /**
   * An append's rows as the write thread takes them, and the events the subscriptions may be given
   * as they are. A command's events share one metadata object, and so may several commands
   * (handleCommand): it is encoded once. Many megabytes (a bulk job's items) are encoded with a turn
   * of the event loop after each megabyte.
   */
  private async encode(events: NewEvent[]): Promise<Pick<EncodedAppend, 'rows' | 'given'>> {
    let lastMetadata: unknown = NOT_ENCODED_YET;
    let metadataJson = '';
    const slices = new LoopSlices(ENCODED_A_SLICE);
    const rows: Array<[string, string, string, string]> = [];
    for (const e of events) {
      if (e.metadata !== lastMetadata) metadataJson = this.metadataText(e, (lastMetadata = e.metadata));
      const data = jsonText(e, 'data', e.data);
      rows.push([e.id, e.type, data, metadataJson]);
      if (events.length > 1) await slices.spend(data.length);
    }
    // Checked (and frozen) as they are encoded: what the subscriptions get is then what was written,
    // whatever the appender does afterwards and whenever they read it.
    const given = events.map((e) => (freezeJson(e.data) && freezeJson(e.metadata) ? e : undefined));
    given.forEach((e, i) => e && this.rememberMetadataText(e.metadata, rows[i][3]));
    return { rows, given };
  }

  /** The append, made again (up to `attempts` in all) while a write thread stops before it and it is not in the file. */
  private async appendRows(append: EncodedAppend, attempts: number): Promise<AppendResult> {
    const { streamId, rows, given, expected } = append;
    let outcome: AppendWritten;
    try {
      const reply = await this.writer.run<AppendReply>('append', encodeAppend({ streamId, events: rows, expected }), (answer) => {
        // Kept before the subscriptions are woken, so that they find these rows here.
        if (answer[0] === 1) this.remember(streamId, given, rows, answer[1], answer[2]);
      });
      outcome = decodeAppendReply(reply);
    } catch (error) {
      if (!(error instanceof WriteOutcomeUnknown)) throw error;
      const committed = this.committedAppends([append]);
      if (committed) return committed[0];
      // Not written, and the stopped thread can no longer write it: made again on a new one.
      if (attempts > 1) return this.appendRows(append, attempts - 1);
      throw new Error(`${this.file}: the write thread stopped before committing an append to ${streamId}; nothing was written`, {
        cause: error,
      });
    }
    if (!outcome.written) throw new WrongExpectedRevision(streamId, expected, outcome.actual ?? 'no_stream');
    return { nextExpectedRevision: outcome.revision, position: sqlitePosition(outcome.position) };
  }

  /** {@link appendRows} for several streams at once, all or none. */
  private async appendAllRows(appends: EncodedAppend[], attempts: number): Promise<AppendResult[]> {
    let reply: AppendAllReply;
    try {
      const list = appends.map(({ streamId, rows, expected }) => encodeAppend({ streamId, events: rows, expected }));
      reply = await this.writer.run<AppendAllReply>('appendAll', list, (answer) => {
        if (answer[0] === 1) appends.forEach((a, i) => this.remember(a.streamId, a.given, a.rows, answer[1 + 2 * i], answer[2 + 2 * i]));
      });
    } catch (error) {
      if (!(error instanceof WriteOutcomeUnknown)) throw error;
      const committed = this.committedAppends(appends);
      if (committed) return committed;
      if (attempts > 1) return this.appendAllRows(appends, attempts - 1);
      const streams = appends.map((a) => a.streamId).join(', ');
      throw new Error(`${this.file}: the write thread stopped before committing an append to ${streams}; nothing was written`, {
        cause: error,
      });
    }
    if (reply[0] === 0) {
      const { streamId, expected } = appends[reply[1]];
      throw new WrongExpectedRevision(streamId, expected, reply[2] === -1 ? 'no_stream' : reply[2]);
    }
    return appends.map((_, i) => ({ nextExpectedRevision: reply[1 + 2 * i], position: sqlitePosition(reply[2 + 2 * i]) }));
  }

  /**
   * An event's metadata as JSON: the text kept for this very object when it was appended before
   * (and frozen then: see `rememberMetadataText`), else encoded now.
   */
  private metadataText(event: NewEvent, metadata: unknown): string {
    const known = metadata !== null && typeof metadata === 'object' ? this.metadataTexts.get(metadata) : undefined;
    return known ?? jsonText(event, 'metadata', metadata);
  }

  /** Keeps the text of a metadata object `freezeJson` passed (frozen: it can no longer change) for the next appends that carry it. */
  private rememberMetadataText(metadata: unknown, text: string): void {
    if (metadata === null || typeof metadata !== 'object' || this.metadataTexts.has(metadata)) return;
    if (this.metadataTexts.size >= RECENT_METADATA) this.metadataTexts.clear();
    this.metadataTexts.set(metadata, text);
  }

  /**
   * The write thread stopped before answering these appends (it has exited, so nothing more will be
   * committed by it): the file tells whether they were committed (all of them, or none: one
   * program), by their events' ids (UUIDs, unique); null when they were not.
   */
  private committedAppends(appends: ReadonlyArray<Pick<EncodedAppend, 'streamId' | 'rows'>>): AppendResult[] | null {
    const results: AppendResult[] = [];
    for (const { streamId, rows } of appends) {
      const last = this.statements.eventInStream.get(streamId, rows[rows.length - 1][0]) as
        { position: number; revision: number } | undefined;
      if (!last) return null;
      results.push({ nextExpectedRevision: last.revision, position: sqlitePosition(last.position) });
    }
    // Committed: the subscriptions may not have seen it (they were woken by no answer).
    this.commits++;
    this.livePages.clear();
    this.appended.emit('appended');
    return results;
  }

  async readStream(streamId: string, fromRevision = 0): Promise<RecordedEvent[]> {
    return (this.statements.readStream.all(streamId, fromRevision) as Row[]).map(toRecorded);
  }

  async readAll({ after, maxCount }: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    return (this.statements.readAll.all(positionNumber(after), maxCount) as Row[]).map(toRecorded);
  }

  /**
   * Filtered in SQL, up to the log's end as it was just before the page was read (the write thread
   * gives positions in commit order, so nothing is committed later below it).
   */
  override async readTypes({ after, maxCount, types }: TypesRead): Promise<TypesPage> {
    const end = this.statements.head.get() as number | null;
    if (end === null || end <= positionNumber(after)) return { events: [], through: after };
    const rows = this.statements.readTypes.all(positionNumber(after), end, JSON.stringify(types), maxCount) as Row[];
    const events = rows.map(toRecorded);
    return { events, through: events.length === maxCount ? events[events.length - 1].position : sqlitePosition(end) };
  }

  override async countByType(): Promise<Map<string, number>> {
    const rows = this.statements.countByType.all() as Array<{ type: string; n: number }>;
    return new Map(rows.map((row) => [row.type, row.n]));
  }

  /** Counted in SQL over the positions' index (5M events: a fraction of a second, nothing decoded). */
  override async countAfter(after: LogPosition | null, limit = Number.POSITIVE_INFINITY): Promise<number> {
    const bound = Number.isFinite(limit) ? limit : -1; // SQLite: a negative LIMIT is none
    return this.statements.countAfter.get(positionNumber(after), bound) as number;
  }

  subscribe({ after, onEvents, onError }: SubscribeOptions): LogSubscription {
    let position = after;
    const cursor = { position: positionNumber(after) };
    this.cursors.add(cursor);
    let closed = false;
    let wake: (() => void) | null = null;
    const poke = () => wake?.();
    this.appended.on('appended', poke);
    const loop = (async () => {
      // Right after a page of this process's own appends, a missing next row means none was
      // appended here since: the file is read only after a wait (another process's appends are
      // found then, within POLL_MS, as before), not once more for every page.
      let ownPageDelivered = false;
      let commitsSeen = this.commits;
      while (!closed) {
        try {
          // A commit since the last look may sit behind another process's append: the file then too.
          const fileToo = !ownPageDelivered || this.commits !== commitsSeen;
          commitsSeen = this.commits;
          const { events: page, own } = this.livePage(positionNumber(position), fileToo);
          ownPageDelivered = own && page.length > 0;
          if (page.length > 0) {
            await onEvents(page);
            position = page[page.length - 1].position;
            cursor.position = positionNumber(position);
            if (!closed) this.forgetRowsRead();
            continue;
          }
          // Woken while it was delivering (no one was listening then): look again rather than sleep.
          if (this.commits !== commitsSeen) continue;
        } catch (error) {
          onError?.(error);
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
    })();
    return {
      close: async () => {
        closed = true;
        this.cursors.delete(cursor);
        this.appended.off('appended', poke);
        poke();
        await loop;
      },
    };
  }

  private remember(
    streamId: string,
    given: ReadonlyArray<NewEvent | undefined>,
    rows: ReadonlyArray<[string, string, string, string]>,
    lastRevision: number,
    lastPosition: number,
  ): void {
    const first = lastPosition - rows.length + 1;
    rows.forEach(([id, type, data, metadata], i) =>
      this.ownRows.set(first + i, {
        position: first + i,
        id,
        stream_id: streamId,
        revision: lastRevision - rows.length + 1 + i,
        type,
        data,
        metadata,
        given: given[i],
      }),
    );
    if (this.ownRows.size > OWN_ROWS) {
      for (const position of this.ownRows.keys()) {
        this.ownRows.delete(position);
        if (this.ownRows.size <= OWN_ROWS / 2) break;
      }
    }
  }

  /** Drops the own rows every open subscription has read (rows are kept in the order of their positions). */
  private forgetRowsRead(): void {
    // With no subscription open, the rows stay (up to OWN_ROWS) for the next one.
    if (this.cursors.size === 0) return;
    let slowest = Infinity;
    for (const { position } of this.cursors) if (position < slowest) slowest = position;
    for (const position of this.ownRows.keys()) {
      if (position > slowest) break;
      this.ownRows.delete(position);
    }
  }

  /** The rows after `after` that this process appended itself, as far as they run without a gap. */
  private ownPage(after: number): Row[] {
    const rows: Row[] = [];
    for (let position = after + 1; rows.length < PAGE; position++) {
      const row = this.ownRows.get(position);
      if (!row) break;
      rows.push(row);
    }
    return rows;
  }

  /** The next page after `after`: this process's own rows when they follow on, else (if `fileToo`) the file's. */
  private livePage(after: number, fileToo: boolean): { events: RecordedEvent[]; own: boolean } {
    let page = this.livePages.get(after);
    if (!page) {
      const own = this.ownPage(after);
      if (own.length === 0 && !fileToo) return { events: [], own: false };
      page = { events: (own.length > 0 ? own : (this.statements.readAll.all(after, PAGE) as Row[])).map(toRecorded), own: own.length > 0 };
      if (this.livePages.size === 0) setImmediate(() => this.livePages.clear());
      this.livePages.set(after, page);
    }
    return page;
  }

  async head(): Promise<LogPosition | null> {
    const head = this.statements.head.get() as number | null;
    return head === null ? null : sqlitePosition(head);
  }

  override warmUp(): void {
    this.writer.prestart();
  }

  async ping(): Promise<void> {
    this.statements.head.get();
  }

  async close(): Promise<void> {
    await this.writer.close();
    this.db.close();
  }
}

const NOT_ENCODED_YET = Symbol('not encoded yet');

/** An append as the write thread takes it: its rows, and the events the subscriptions may be given as they are. */
interface EncodedAppend {
  streamId: string;
  expected: ExpectedRevision;
  rows: Array<[string, string, string, string]>;
  given: Array<NewEvent | undefined>;
}
/**
 * Metadata texts kept at most (cleared when full). A purchase's commands share one metadata object
 * (or three, see handleCommand); the 50 purchases of the bench in flight hold ~150.
 */
const RECENT_METADATA = 1024;

/**
 * A part of an event as JSON text. A value JSON has no text for (`undefined`, a function) is
 * refused before anything is written: stored, its row could never be read back.
 */
function jsonText(event: NewEvent, part: 'data' | 'metadata', value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  if (typeof text !== 'string')
    throw new TypeError(`event ${event.type} (${event.id}): its ${part} has no JSON form; nothing was appended`);
  return text;
}

/**
 * The event of a row. An own append's objects serve as they are when JSON gives them back unchanged
 * (checked and frozen at the append: every reader shares them, the appender too); else, and for
 * rows read from the file, the stored JSON is parsed.
 */
function toRecorded(row: Row): RecordedEvent {
  const { given } = row;
  return {
    id: row.id,
    type: row.type,
    data: given ? given.data : JSON.parse(row.data),
    metadata: given ? given.metadata : JSON.parse(row.metadata),
    streamId: row.stream_id,
    revision: row.revision,
    position: sqlitePosition(row.position),
  };
}
