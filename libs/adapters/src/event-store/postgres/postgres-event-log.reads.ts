import { LogPosition, RecordedEvent, StreamRevision, TypesPage, TypesRead } from '@deals/kernel';
import { Client, Pool } from 'pg';
import { CONNECT_TIMEOUT_MS } from '../../postgres-pool';
import { COLUMNS, HORIZON, orderOf, positionOf, PostgresLogSchema, recorded, Row } from './postgres-event-log.schema';

/** How long counting the log's events by type may take (a whole-log scan), against a request's few seconds. */
const COUNT_TIMEOUT_MS = 600_000;

/** A page of the log after a position, and whether events wait behind the horizon (see `readPage`); named, planned once a connection. */
const READ_PAGE = `WITH horizon(h) AS MATERIALIZED (${HORIZON}),
       page AS MATERIALIZED (
         SELECT ${COLUMNS}, events.tx AS order_tx, events.position AS order_position FROM events, horizon
          WHERE (events.tx, events.position) > ($1::xid8, $2::bigint) AND events.tx < horizon.h
          ORDER BY events.tx, events.position LIMIT $3),
       held AS (
         SELECT EXISTS (SELECT 1 FROM events, horizon WHERE events.tx >= horizon.h AND (events.tx, events.position) > ($1::xid8, $2::bigint)) AS held)
       SELECT page.tx, page.position, page.stream_id, page.revision, page.event_id, page.type, page.data, page.metadata, held.held
         FROM held LEFT JOIN page ON true ORDER BY page.order_tx, page.order_position`;

/** Events of the log a {@link READ_TYPES} statement passes over at most, so that a page of rare types stays a short statement. */
const TYPES_WINDOW = 100_000;

/**
 * A page of the log's events of some types among the next {@link TYPES_WINDOW} events after a
 * position, below the horizon (no later commit goes before them); when the page is not full, also
 * the window's last event, read in the same snapshot: everything up to it has then been read.
 * Named, planned once a connection.
 */
const READ_TYPES = `WITH horizon(h) AS MATERIALIZED (${HORIZON}),
       page AS MATERIALIZED (
         SELECT win.* FROM (
           SELECT ${COLUMNS}, events.tx AS order_tx, events.position AS order_position FROM events, horizon
            WHERE (events.tx, events.position) > ($1::xid8, $2::bigint) AND events.tx < horizon.h
            ORDER BY events.tx, events.position LIMIT ${TYPES_WINDOW}) AS win
          WHERE win.type = ANY($4::text[]) ORDER BY win.order_tx, win.order_position LIMIT $3),
       last AS (
         SELECT win.tx::text AS last_tx, win.position::text AS last_position FROM (
           SELECT events.tx, events.position FROM events, horizon
            WHERE (events.tx, events.position) > ($1::xid8, $2::bigint) AND events.tx < horizon.h
            ORDER BY events.tx, events.position LIMIT ${TYPES_WINDOW}) AS win
          WHERE (SELECT count(*) FROM page) < $3
          ORDER BY win.tx DESC, win.position DESC LIMIT 1)
       SELECT page.tx, page.position, page.stream_id, page.revision, page.event_id, page.type, page.data, page.metadata,
              (SELECT last_tx FROM last) AS last_tx, (SELECT last_position FROM last) AS last_position
         FROM (SELECT 1) AS one LEFT JOIN page ON true ORDER BY page.order_tx, page.order_position`;

/** The log's reads, on the store's pool (the whole-log count on a connection of its own). */
export class PostgresLogReads {
  constructor(
    private readonly pool: Pool,
    private readonly url: string,
    private readonly schema: PostgresLogSchema,
  ) {}

  async readStream(streamId: string, fromRevision: StreamRevision = 0): Promise<RecordedEvent[]> {
    await this.schema.made();
    const found = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision`, [
      streamId,
      fromRevision,
    ]);
    return found.rows.map(recorded);
  }

  /**
   * `readAll`, and whether events committed after the page are held back by the horizon (a
   * transaction begun before theirs still running, perhaps one that writes no event and so will
   * send no notice when it ends): a subscription then reads again soon instead of waiting.
   */
  async readPage(after: LogPosition | null, maxCount: number): Promise<{ events: RecordedEvent[]; heldBack: boolean }> {
    await this.schema.made();
    const [tx, position] = orderOf(after);
    const found = await this.pool.query<Partial<Row> & { held: boolean }>({
      name: 'deals_read_page',
      text: READ_PAGE,
      values: [tx, position, maxCount],
    });
    const heldBack = found.rows[0]?.held ?? false;
    const events = found.rows.filter((row) => row.position !== null).map((row) => recorded(row as Row));
    return { events, heldBack };
  }

  /** On a connection of its own that may take {@link COUNT_TIMEOUT_MS}: the count scans the whole log (seconds at millions of events). */
  async countByType(): Promise<Map<string, number>> {
    await this.schema.made();
    const client = new Client({ connectionString: this.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: COUNT_TIMEOUT_MS });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const found = await client.query<{ type: string; n: string }>('SELECT type, count(*)::text AS n FROM events GROUP BY type');
      return new Map(found.rows.map((row) => [row.type, Number(row.n)]));
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Filtered by type in the statement: the events of other types are passed over by the server, never sent. */
  async readTypes({ after, maxCount, types }: TypesRead): Promise<TypesPage> {
    await this.schema.made();
    const [tx, position] = orderOf(after);
    const found = await this.pool.query<Partial<Row> & { last_tx: string | null; last_position: string }>({
      name: 'deals_read_types',
      text: READ_TYPES,
      values: [tx, position, maxCount, types],
    });
    const events = found.rows.filter((row) => row.position !== null).map((row) => recorded(row as Row));
    if (events.length === maxCount) return { events, through: events[events.length - 1].position };
    // The window's last event (none when nothing follows `after`): through it, every event of these types is in the page.
    const last = found.rows[0];
    const end = last?.last_tx != null ? positionOf({ tx: last.last_tx, position: last.last_position }) : null;
    return { events, through: end !== null && (after === null || end > after) ? end : after };
  }

  async countAfter(after: LogPosition | null, limit = Number.POSITIVE_INFINITY): Promise<number> {
    await this.schema.made();
    const [tx, position] = orderOf(after);
    const found = await this.pool.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM (SELECT 1 FROM events WHERE (tx, position) > ($1::xid8, $2::bigint) LIMIT $3) AS counted`,
      [tx, position, Number.isFinite(limit) ? limit : null],
    );
    return Number(found.rows[0].n);
  }

  async head(): Promise<LogPosition | null> {
    await this.schema.made();
    const found = await this.pool.query<{ tx: string; position: string }>(
      'SELECT tx::text AS tx, position::text AS position FROM events ORDER BY events.tx DESC, events.position DESC LIMIT 1',
    );
    return found.rows.length ? positionOf(found.rows[0]) : null;
  }
}
