import { LogPosition, NewEvent, RecordedEvent, TypesPage, TypesRead } from '@deals/kernel';
import Database from 'better-sqlite3';

/** A row of the `events` table. */
export interface Row {
  position: number;
  id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  /** An own append's event as the caller gave it, when `freezeJson` passed its data and metadata: decoded from it instead of the JSON. */
  given?: NewEvent;
}

/** Digits of a log position's text: zero-padded, so that positions compare as text in log order. */
export const SQLITE_POSITION_WIDTH = 20;
export const sqlitePosition = (n: number | bigint): LogPosition => String(n).padStart(SQLITE_POSITION_WIDTH, '0');
export const positionNumber = (p: LogPosition | null) => (p === null ? 0 : Number(p));

/**
 * The event of a row. An own append's objects serve as they are when JSON gives them back unchanged
 * (checked and frozen at the append: every reader shares them, the appender too); else, and for
 * rows read from the file, the stored JSON is parsed.
 */
export function toRecorded(row: Row): RecordedEvent {
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

/** The log's reads, on this thread's own connection: each sees an append once it is acknowledged. */
export class SqliteLogReads {
  private readonly statements: {
    readStream: Database.Statement;
    readAll: Database.Statement;
    readTypes: Database.Statement;
    countByType: Database.Statement;
    head: Database.Statement;
    eventInStream: Database.Statement;
    countAfter: Database.Statement;
  };

  constructor(db: Database.Database) {
    this.statements = {
      readStream: db.prepare('SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision'),
      readAll: db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      readTypes: db.prepare(
        'SELECT * FROM events WHERE position > ? AND position <= ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position LIMIT ?',
      ),
      countByType: db.prepare('SELECT type, count(*) AS n FROM events GROUP BY type'),
      head: db.prepare('SELECT MAX(position) FROM events').pluck(),
      eventInStream: db.prepare('SELECT position, revision FROM events WHERE stream_id = ? AND id = ?'),
      countAfter: db.prepare('SELECT count(*) FROM (SELECT 1 FROM events WHERE position > ? LIMIT ?)').pluck(),
    };
  }

  readStream(streamId: string, fromRevision: number): RecordedEvent[] {
    return (this.statements.readStream.all(streamId, fromRevision) as Row[]).map(toRecorded);
  }

  /** The rows after position `after`, up to `maxCount`. */
  rowsAfter(after: number, maxCount: number): Row[] {
    return this.statements.readAll.all(after, maxCount) as Row[];
  }

  /**
   * Filtered in SQL, up to the log's end as it was just before the page was read (the write thread
   * gives positions in commit order, so nothing is committed later below it).
   */
  readTypes({ after, maxCount, types }: TypesRead): TypesPage {
    const end = this.headNumber();
    if (end === null || end <= positionNumber(after)) return { events: [], through: after };
    const rows = this.statements.readTypes.all(positionNumber(after), end, JSON.stringify(types), maxCount) as Row[];
    const events = rows.map(toRecorded);
    return { events, through: events.length === maxCount ? events[events.length - 1].position : sqlitePosition(end) };
  }

  countByType(): Map<string, number> {
    const rows = this.statements.countByType.all() as Array<{ type: string; n: number }>;
    return new Map(rows.map((row) => [row.type, row.n]));
  }

  /** Counted in SQL over the positions' index (5M events: a fraction of a second, nothing decoded). */
  countAfter(after: LogPosition | null, limit: number): number {
    const bound = Number.isFinite(limit) ? limit : -1; // SQLite: a negative LIMIT is none
    return this.statements.countAfter.get(positionNumber(after), bound) as number;
  }

  /** The position of the newest event, or null for an empty log. */
  headNumber(): number | null {
    return this.statements.head.get() as number | null;
  }

  /** The position and revision of a stream's event by its id, if the file holds it. */
  eventInStream(streamId: string, eventId: string): { position: number; revision: number } | undefined {
    return this.statements.eventInStream.get(streamId, eventId) as { position: number; revision: number } | undefined;
  }
}
