import { LogPosition, RecordedEvent } from '@deals/kernel';
import { Pool } from 'pg';

/** The channel appends notify at commit, to wake the subscriptions at once. */
export const CHANNEL = 'deals_events';
export const WIDTH = 20;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS event_streams (
  stream_id text PRIMARY KEY,
  revision integer NOT NULL,
  tx xid8 NOT NULL DEFAULT '0'
);
CREATE TABLE IF NOT EXISTS events (
  position bigserial PRIMARY KEY,
  stream_id text NOT NULL,
  revision integer NOT NULL,
  event_id uuid NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL,
  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
  UNIQUE (stream_id, revision)
);
CREATE INDEX IF NOT EXISTS events_in_order ON events (tx, position);
`;

/**
 * A log made before appends were ordered by transaction: its events keep transaction 0 (ordered
 * before every later one, as they were written: one writer at a time) and the positions already
 * given out for them.
 */
const ORDER_BY_TRANSACTION = `
ALTER TABLE events ADD COLUMN IF NOT EXISTS tx xid8 NOT NULL DEFAULT '0';
ALTER TABLE events ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
ALTER TABLE event_streams ADD COLUMN IF NOT EXISTS tx xid8 NOT NULL DEFAULT '0';
CREATE INDEX IF NOT EXISTS events_in_order ON events (tx, position);
`;

export interface Row {
  tx: string;
  position: string;
  stream_id: string;
  revision: number;
  event_id: string;
  type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
}

/**
 * The log's order is its events' (transaction id, sequence number). Sequence numbers are drawn at
 * insert and transactions commit in another order, so a reader going by sequence number alone
 * could pass an event whose transaction committed late and never see it. Ordered by the writing
 * transaction's id first, and read only below the oldest transaction still running
 * (`pg_snapshot_xmin`), the log is read in an order no later commit can insert into: every
 * transaction that could still commit has an id at or above that horizon. No append waits for
 * another's commit, except on the streams both write (their rows' locks).
 *
 * A position is that pair: `1`, the transaction id and the sequence number, 20 digits each
 * (`1<tx>:<seq>`); an event written before this order (transaction 0) keeps the 20-digit sequence
 * number it was given, which compares before every later position.
 */
export const positionOf = (row: { tx: string; position: string }): LogPosition =>
  row.tx === '0' ? row.position.padStart(WIDTH, '0') : `1${row.tx.padStart(WIDTH, '0')}:${row.position.padStart(WIDTH, '0')}`;

const LEGACY = /^\d{20}$/;
const ORDERED = /^1(\d{20}):(\d{20})$/;

/** The (transaction id, sequence number) of a position this store gave. */
export function orderOf(position: LogPosition | null): [string, string] {
  if (position === null) return ['0', '0'];
  if (LEGACY.test(position)) return ['0', BigInt(position).toString()];
  const found = ORDERED.exec(position);
  if (!found) throw new Error(`not a position of this log: ${position}`);
  return [BigInt(found[1]).toString(), BigInt(found[2]).toString()];
}

/**
 * The oldest transaction that may still write events: the lowest id of the transactions running
 * when the statement's snapshot was taken, leaving out those that run now in another database of
 * the server (they cannot write this log, and a long one there must not hold this log's readers
 * back), or else the next id to be given out. A transaction of this database that ended since the
 * snapshot, or one whose database cannot be read (another role's session), counts: at worst the
 * horizon is lower for one read.
 */
export const HORIZON = `
  SELECT coalesce(min(x), pg_snapshot_xmax(pg_current_snapshot()))
    FROM pg_snapshot_xip(pg_current_snapshot()) AS x
   WHERE (x::text::bigint % 4294967296) NOT IN (
     SELECT backend_xid::text::bigint FROM pg_stat_activity WHERE datname <> current_database() AND backend_xid IS NOT NULL)`;

export const recorded = (row: Row): RecordedEvent => ({
  id: row.event_id,
  type: row.type,
  data: row.data,
  metadata: row.metadata,
  streamId: row.stream_id,
  revision: row.revision,
  position: positionOf(row),
});

/** The columns read (ordering by the table's own columns: `events.tx`, `events.position`, not these texts). */
export const COLUMNS = 'tx::text AS tx, position::text AS position, stream_id, revision, event_id::text AS event_id, type, data, metadata';

/**
 * Creates the tables on first use (once per process). Looked for first: DDL on an existing table
 * still takes its lock, and would wait behind every append in flight.
 */
export class PostgresLogSchema {
  private ready: Promise<void> | null = null;

  constructor(private readonly pool: Pool) {}

  made(): Promise<void> {
    this.ready ??= this.pool
      .query<{ made: boolean; ordered: boolean }>(
        `SELECT to_regclass('events') IS NOT NULL AS made,
                EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('events') AND attname = 'tx' AND NOT attisdropped) AS ordered`,
      )
      .then(async ({ rows }) => {
        if (!rows[0].made) await this.pool.query(`SELECT pg_advisory_xact_lock(7216001); ${SCHEMA}`);
        else if (!rows[0].ordered) await this.pool.query(`SELECT pg_advisory_xact_lock(7216001); ${ORDER_BY_TRANSACTION}`);
      })
      .catch((error) => {
        this.ready = null;
        throw error;
      });
    return this.ready;
  }
}
