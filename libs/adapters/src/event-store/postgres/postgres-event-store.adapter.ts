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
 * in their order, and "after my last position" skips nothing (docs/decisions.md "PostgreSQL
 * adapters", one writer at a time: why not the xmin horizon).
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

/**
 * Connections a store keeps at most. Appends take one at a time (group commit), reads the rest;
 * kept small so that replicas, a worker and a CLI fit in PostgreSQL's default 100 connections.
 */
const POOL_SIZE = 8;

/** Appends written together in one transaction, at most. */
const MAX_GROUP = 500;

interface PendingAppend {
  streamId: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

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
  private listener: Client | null = null;
  /** Appends waiting for the next group, and whether a group is being written. */
  private readonly pending: PendingAppend[] = [];
  private flushing = false;

  constructor(private readonly url: string) {
    super();
    this.pool = new Pool({ connectionString: url, max: POOL_SIZE });
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
        if (!rows[0].made) await this.pool.query(`SELECT pg_advisory_xact_lock(7216001); ${SCHEMA}`);
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
    return new Promise((resolve, reject) => {
      this.pending.push({ streamId, events, expected, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  /** Writes the appends waiting, as groups of at most {@link MAX_GROUP}, one transaction each, until none waits. */
  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length) await this.writeGroup(this.pending.splice(0, MAX_GROUP));
    } finally {
      this.flushing = false;
    }
  }

  /**
   * One transaction for a group of appends (group commit: one lock, one commit for them all). With
   * the writer lock held no other process changes a stream, so each append's expected revision is
   * checked here against the revisions read once, in arrival order; a refused one fails alone.
   */
  private async writeGroup(group: PendingAppend[]): Promise<void> {
    let client: PoolClient | null = null;
    const started = performance.now();
    try {
      client = await this.pool.connect();
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK]);
      const streams = [...new Set(group.map((a) => a.streamId))];
      const found = await client.query<{ stream_id: string; revision: number }>(
        'SELECT stream_id, revision FROM event_streams WHERE stream_id = ANY($1::text[])',
        [streams],
      );
      const revisions = new Map<string, number>(found.rows.map((r) => [r.stream_id, r.revision]));
      const accepted: Array<{ append: PendingAppend; first: number }> = [];
      for (const append of group) {
        const current = revisions.get(append.streamId);
        const ok = append.expected === 'any' || (append.expected === 'no_stream' ? current === undefined : current === append.expected);
        if (!ok) {
          append.reject(new WrongExpectedRevision(append.streamId, append.expected, current ?? 'no_stream'));
          continue;
        }
        const first = (current ?? -1) + 1;
        revisions.set(append.streamId, first + append.events.length - 1);
        accepted.push({ append, first });
      }
      if (!accepted.length) {
        await client.query('ROLLBACK');
        return;
      }
      const touched = [...new Set(accepted.map((a) => a.append.streamId))];
      await client.query(
        `INSERT INTO event_streams (stream_id, revision) SELECT * FROM unnest($1::text[], $2::int[])
         ON CONFLICT (stream_id) DO UPDATE SET revision = EXCLUDED.revision`,
        [touched, touched.map((id) => revisions.get(id)!)],
      );
      const rows = accepted.flatMap(({ append, first }) =>
        append.events.map((event, i) => ({ streamId: append.streamId, revision: first + i, event })),
      );
      // Positions are drawn in the rows' order (WITH ORDINALITY), so each append's come back together.
      const inserted = await client.query<{ position: string }>(
        `INSERT INTO events (stream_id, revision, event_id, type, data, metadata)
         SELECT s, r, i, t, d, m FROM unnest($1::text[], $2::int[], $3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[])
           WITH ORDINALITY AS x(s, r, i, t, d, m, n) ORDER BY n
         RETURNING position::text AS position`,
        [
          rows.map((r) => r.streamId),
          rows.map((r) => r.revision),
          rows.map((r) => r.event.id),
          rows.map((r) => r.event.type),
          rows.map((r) => JSON.stringify(r.event.data)),
          rows.map((r) => JSON.stringify(r.event.metadata)),
        ],
      );
      await client.query(`SELECT pg_notify('${CHANNEL}', '')`);
      await client.query('COMMIT');
      this.reportCommitted(accepted.length, (performance.now() - started) / 1000);
      const positions = inserted.rows.map((r) => r.position).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
      let at = 0;
      for (const { append, first } of accepted) {
        at += append.events.length;
        this.reportAppended(append.events);
        append.resolve({ nextExpectedRevision: first + append.events.length - 1, position: positionOf({ position: positions[at - 1] }) });
      }
    } catch (error) {
      await client?.query('ROLLBACK').catch(() => undefined);
      for (const append of group) append.reject(error);
    } finally {
      client?.release();
    }
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

  override async countAfter(after: LogPosition | null, limit = Number.POSITIVE_INFINITY): Promise<number> {
    await this.schema();
    const found = await this.pool.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM (SELECT 1 FROM events WHERE position > $1::bigint LIMIT $2) AS counted`,
      [after === null ? '0' : BigInt(after).toString(), Number.isFinite(limit) ? limit : null],
    );
    return Number(found.rows[0].n);
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    const subscription = new PostgresSubscription(this, options, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    void this.listen();
    return subscription;
  }

  /**
   * One LISTEN connection for all of this store's subscriptions (a worker runs one a view): a
   * notification wakes them all. Lost, it is opened again on the next subscription's poll.
   */
  async listen(): Promise<void> {
    if (this.listener || this.closed || !this.subscriptions.size) return;
    const client = new Client({ connectionString: this.url });
    this.listener = client;
    client.on('error', () => {
      if (this.listener === client) this.listener = null;
      void client.end().catch(() => undefined);
    });
    client.on('notification', () => {
      for (const subscription of this.subscriptions) subscription.wakeUp();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch {
      if (this.listener === client) this.listener = null;
      await client.end().catch(() => undefined);
    }
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
    await this.listener?.end().catch(() => undefined);
    this.listener = null;
    await this.pool.end();
  }
}

/** A catch-up subscription: reads pages after its position, then waits for a notification or the poll. */
class PostgresSubscription implements LogSubscription {
  private closed = false;
  private wake: (() => void) | null = null;
  private readonly done: Promise<void>;

  constructor(
    private readonly store: PostgresEventStore,
    private readonly options: SubscribeOptions,
    private readonly forget: () => void,
  ) {
    this.done = this.run();
  }

  /** New events may be there (a notification came). */
  wakeUp(): void {
    this.wake?.();
  }

  private async run(): Promise<void> {
    let after = this.options.after;
    while (!this.closed) {
      try {
        await this.store.listen();
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
    this.forget();
  }
}
