import {
  AppendResult,
  EventStore,
  ExpectedRevision,
  LogPosition,
  LogSubscription,
  NewEvent,
  RecordedEvent,
  StreamRevision,
  SubscribeOptions,
  WrongExpectedRevision,
} from '@deals/kernel';
import { Client, Pool, PoolClient } from 'pg';

/** The channel appends notify at commit, to wake the subscriptions at once. */
const CHANNEL = 'deals_events';
/** How often a subscription looks for new events without a notification (one lost while reconnecting). */
const POLL_MS = 500;
/** Events one subscription read fetches at most. */
const PAGE = 500;
const WIDTH = 20;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS event_streams (
  stream_id text PRIMARY KEY,
  revision integer NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  position bigserial PRIMARY KEY,
  stream_id text NOT NULL,
  revision integer NOT NULL,
  event_id uuid NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL,
  UNIQUE (stream_id, revision)
);
`;

interface Row {
  position: string;
  stream_id: string;
  revision: number;
  event_id: string;
  type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
}

/**
 * One writer at a time: every append takes this transaction-level advisory lock before it draws its
 * sequence numbers, and holds it until it has committed. Sequence numbers are drawn at insert time
 * and transactions could otherwise commit in another order, so a reader going by position could
 * pass an event whose transaction committed late and never see it; with the lock, positions commit
 * in their order, and "after my last position" skips nothing (docs/decisions.md "PostgreSQL event
 * store": why not the xmin horizon).
 */
const APPEND_LOCK = 7216002;

/** A log position: the row's sequence number as 20 digits. */
const positionOf = (row: { position: string }): LogPosition => row.position.padStart(WIDTH, '0');

const recorded = (row: Row): RecordedEvent => ({
  id: row.event_id,
  type: row.type,
  data: row.data,
  metadata: row.metadata,
  streamId: row.stream_id,
  revision: row.revision,
  position: positionOf(row),
});

const COLUMNS = 'position::text AS position, stream_id, revision, event_id::text AS event_id, type, data, metadata';

/**
 * The EventStore on PostgreSQL (`DATABASE_URL`): one `events` table, one row per stream holding its
 * revision (the expected-revision check), each append one transaction acknowledged once PostgreSQL
 * has committed it (its own fsync), one writer at a time ({@link APPEND_LOCK}) across every process;
 * subscriptions wake on LISTEN/NOTIFY and poll.
 */
export class PostgresEventStore extends EventStore {
  readonly backend = 'postgresql';
  private readonly pool: Pool;
  private ready: Promise<void> | null = null;
  private closed = false;
  private readonly subscriptions = new Set<PostgresSubscription>();

  constructor(private readonly url: string) {
    super();
    this.pool = new Pool({ connectionString: url, max: 20 });
    // A client lost while idle is dropped by the pool; the error must not crash the process.
    this.pool.on('error', () => undefined);
  }

  /**
   * Creates the tables on first use (once per process). Looked for first: DDL on an existing table
   * still takes its lock, and would wait behind every append in flight.
   */
  private schema(): Promise<void> {
    this.ready ??= this.pool
      .query<{ made: boolean }>(`SELECT to_regclass('events') IS NOT NULL AS made`)
      .then(async ({ rows }) => {
        if (!rows[0].made) await this.pool.query(`SELECT pg_advisory_lock(7216001); ${SCHEMA} SELECT pg_advisory_unlock(7216001);`);
      })
      .catch((error) => {
        this.ready = null;
        throw error;
      });
    return this.ready;
  }

  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (!events.length) throw new Error('append needs at least one event');
    await this.schema();
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK]);
      const first = await this.claimRevisions(client, streamId, events.length, expected);
      const values: unknown[] = [];
      const rows = events.map((e, i) => {
        values.push(streamId, first + i, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata));
        const p = i * 6;
        return `($${p + 1}, $${p + 2}, $${p + 3}::uuid, $${p + 4}, $${p + 5}::jsonb, $${p + 6}::jsonb)`;
      });
      const inserted = await client.query<{ position: string }>(
        `INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES ${rows.join(', ')} RETURNING position::text AS position`,
        values,
      );
      await client.query(`SELECT pg_notify('${CHANNEL}', '')`);
      await client.query('COMMIT');
      const last = inserted.rows[inserted.rows.length - 1];
      return { nextExpectedRevision: first + events.length - 1, position: positionOf(last) };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Moves the stream's revision on by `count` if it is at `expected`; returns the first new revision. */
  private async claimRevisions(client: PoolClient, streamId: string, count: number, expected: ExpectedRevision): Promise<number> {
    if (expected === 'no_stream') {
      const made = await client.query('INSERT INTO event_streams (stream_id, revision) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
        streamId,
        count - 1,
      ]);
      if (made.rowCount === 1) return 0;
      throw new WrongExpectedRevision(streamId, expected, await this.revisionOf(client, streamId));
    }
    if (expected === 'any') {
      const moved = await client.query<{ revision: number }>(
        `INSERT INTO event_streams (stream_id, revision) VALUES ($1, $2 - 1)
         ON CONFLICT (stream_id) DO UPDATE SET revision = event_streams.revision + $2 RETURNING revision`,
        [streamId, count],
      );
      return moved.rows[0].revision - count + 1;
    }
    const moved = await client.query('UPDATE event_streams SET revision = revision + $2 WHERE stream_id = $1 AND revision = $3', [
      streamId,
      count,
      expected,
    ]);
    if (moved.rowCount === 1) return expected + 1;
    throw new WrongExpectedRevision(streamId, expected, await this.revisionOf(client, streamId));
  }

  private async revisionOf(client: PoolClient, streamId: string): Promise<StreamRevision | 'no_stream'> {
    const found = await client.query<{ revision: number }>('SELECT revision FROM event_streams WHERE stream_id = $1', [streamId]);
    return found.rows.length ? found.rows[0].revision : 'no_stream';
  }

  async readStream(streamId: string, fromRevision: StreamRevision = 0): Promise<RecordedEvent[]> {
    await this.schema();
    const found = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision`, [
      streamId,
      fromRevision,
    ]);
    return found.rows.map(recorded);
  }

  async readAll({ after, maxCount }: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    await this.schema();
    const found = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM events WHERE events.position > $1::bigint ORDER BY events.position LIMIT $2`,
      [after === null ? '0' : BigInt(after).toString(), maxCount],
    );
    return found.rows.map(recorded);
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    const subscription = new PostgresSubscription(this, this.url, options, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    return subscription;
  }

  async head(): Promise<LogPosition | null> {
    await this.schema();
    const found = await this.pool.query<{ position: string }>(
      'SELECT position::text AS position FROM events ORDER BY events.position DESC LIMIT 1',
    );
    return found.rows.length ? positionOf(found.rows[0]) : null;
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    // Closing twice is closing once.
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.pool.end();
  }
}

/** A catch-up subscription: reads pages after its position, then waits for a notification or the poll. */
class PostgresSubscription implements LogSubscription {
  private closed = false;
  private wake: (() => void) | null = null;
  private listener: Client | null = null;
  private readonly done: Promise<void>;

  constructor(
    private readonly store: PostgresEventStore,
    private readonly url: string,
    private readonly options: SubscribeOptions,
    private readonly forget: () => void,
  ) {
    this.done = this.run();
  }

  private async listen(): Promise<void> {
    if (this.listener || this.closed) return;
    const client = new Client({ connectionString: this.url });
    client.on('error', () => {
      // Lost: the poll carries on, and the next turn connects again.
      if (this.listener === client) this.listener = null;
      void client.end().catch(() => undefined);
    });
    client.on('notification', () => this.wake?.());
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.listener = client;
  }

  private async run(): Promise<void> {
    let after = this.options.after;
    while (!this.closed) {
      try {
        await this.listen();
        const page = await this.store.readAll({ after, maxCount: PAGE });
        if (this.closed) break;
        if (page.length) {
          await this.options.onEvents(page);
          after = page[page.length - 1].position;
          continue;
        }
      } catch (error) {
        this.options.onError?.(error);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.done;
    await this.listener?.end().catch(() => undefined);
    this.listener = null;
    this.forget();
  }
}
