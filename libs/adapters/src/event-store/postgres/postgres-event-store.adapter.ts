import { CONNECT_TIMEOUT_MS, servicePool, sessionClient } from '../../postgres-pool';
import {
  AppendResult,
  checkStreamAppends,
  EventStore,
  FairSlots,
  ExpectedRevision,
  InlineViews,
  LogPosition,
  LogSubscription,
  NewEvent,
  RecordedEvent,
  StoreBusy,
  StreamAppend,
  StreamRevision,
  SubscribeOptions,
  TypesPage,
  TypesRead,
  ViewDocument,
  WrongExpectedRevision,
} from '@deals/kernel';
import { createHash } from 'node:crypto';
import { Client, Pool, PoolClient } from 'pg';
import type { InlineWrites, InlineDocuments } from '../../view-store/postgres/postgres-view-store.adapter';

/** Where a view store of the same database writes documents within an append's statement (`PostgresViewStore.inlineWrites`). */
export interface InlineViewTables {
  inlineWrites(views: InlineDocuments, param: (value: unknown) => string, positions: string): InlineWrites | null;
}

/** The channel appends notify at commit, to wake the subscriptions at once. */
const CHANNEL = 'deals_events';
/** How often a subscription looks for new events without a notification (one lost while reconnecting), unless told otherwise. */
const POLL_MS = 500;
/** How soon a subscription reads again when committed events wait behind an older transaction (which may send no notice). */
const HELD_BACK_MS = 5;
/** How long counting the log's events by type may take (a whole-log scan), against a request's few seconds. */
const COUNT_TIMEOUT_MS = 600_000;
/** Events one subscription read fetches at most. */
const PAGE = 500;
const WIDTH = 20;

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

interface Row {
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
const positionOf = (row: { tx: string; position: string }): LogPosition =>
  row.tx === '0' ? row.position.padStart(WIDTH, '0') : `1${row.tx.padStart(WIDTH, '0')}:${row.position.padStart(WIDTH, '0')}`;

const LEGACY = /^\d{20}$/;
const ORDERED = /^1(\d{20}):(\d{20})$/;

/** The (transaction id, sequence number) of a position this store gave. */
function orderOf(position: LogPosition | null): [string, string] {
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
const HORIZON = `
  SELECT coalesce(min(x), pg_snapshot_xmax(pg_current_snapshot()))
    FROM pg_snapshot_xip(pg_current_snapshot()) AS x
   WHERE (x::text::bigint % 4294967296) NOT IN (
     SELECT backend_xid::text::bigint FROM pg_stat_activity WHERE datname <> current_database() AND backend_xid IS NOT NULL)`;

/** Appends of a group decided again, at most, when a conflict with another transaction showed only once written. */
const GROUP_ATTEMPTS = 5;

/** The id, type, data and metadata columns of events to insert, as the statements' array parameters. */
const eventColumns = (rows: ReadonlyArray<{ event: NewEvent }>) => [
  rows.map((r) => r.event.id),
  rows.map((r) => r.event.type),
  rows.map((r) => JSON.stringify(r.event.data)),
  rows.map((r) => JSON.stringify(r.event.metadata)),
];

/** Raised inside a group's transaction when another transaction's commit makes it start again. */
class GroupRetry extends Error {}

const UNIQUE_VIOLATION = '23505';
/**
 * Whether a statement failed with this SQLSTATE for what it wrote, not for the connection or the
 * transaction's race (those are tried again whole): data exceptions, integrity violations but a
 * unique one, undefined objects (a dropped table) and program limits.
 */
const refusedDocuments = (code: string): boolean =>
  /^[0-9A-Z]{5}$/.test(code) && code !== UNIQUE_VIOLATION && ['22', '23', '42', '54'].includes(code.slice(0, 2));
const DEADLOCK = '40P01';

/** An expected revision in SQL: `any`, `no_stream`, or the revision itself (0 or more). */
const ANY_REVISION = -2;
const NO_STREAM = -1;

/**
 * A group of appends to distinct streams as one statement (see `writeStatement`); named, so each
 * connection plans it once. Appends of one unit (`$10`, an appendToStreams') stand or fall
 * together: written only if every one of them is at its expected revision; their new streams are
 * made without `ON CONFLICT`, so one made meanwhile by another transaction fails the whole statement
 * (then tried again) instead of leaving the unit half written.
 */
const APPEND_WITH = `WITH me AS (SELECT pg_current_xact_id() AS tx),
       req AS (SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $10::int[]) WITH ORDINALITY AS r(stream_id, expected, n, u, k)),
       cur AS MATERIALIZED (
         SELECT stream_id, revision, tx FROM event_streams WHERE stream_id = ANY($1::text[]) ORDER BY stream_id FOR UPDATE),
       checked AS MATERIALIZED (
         SELECT req.k, req.u, req.stream_id, req.n, cur.revision AS current, cur.stream_id IS NOT NULL AS known,
                coalesce(cur.tx > me.tx, false) AS later,
                CASE WHEN req.expected = ${ANY_REVISION} THEN true
                     WHEN req.expected = ${NO_STREAM} THEN cur.stream_id IS NULL
                     ELSE cur.revision IS NOT DISTINCT FROM req.expected END AS ok
           FROM req CROSS JOIN me LEFT JOIN cur ON cur.stream_id = req.stream_id),
       verdict AS MATERIALIZED (
         SELECT checked.*, bool_and(ok) OVER (PARTITION BY u) AS whole, count(*) OVER (PARTITION BY u) > 1 AS multi FROM checked),
       go AS (SELECT NOT EXISTS (SELECT 1 FROM verdict WHERE later) AS go),
       moved AS (
         UPDATE event_streams AS s SET revision = v.current + v.n, tx = me.tx FROM verdict AS v, me, go
          WHERE s.stream_id = v.stream_id AND v.whole AND v.known AND go.go),
       made AS (
         INSERT INTO event_streams (stream_id, revision, tx)
           SELECT v.stream_id, v.n - 1, me.tx FROM verdict AS v, me, go WHERE v.whole AND NOT v.known AND NOT v.multi AND go.go
           ON CONFLICT (stream_id) DO NOTHING RETURNING stream_id),
       made_together AS (
         INSERT INTO event_streams (stream_id, revision, tx)
           SELECT v.stream_id, v.n - 1, me.tx FROM verdict AS v, me, go WHERE v.whole AND NOT v.known AND v.multi AND go.go),
       added AS (
         INSERT INTO events (stream_id, revision, event_id, type, data, metadata)
           SELECT v.stream_id, coalesce(v.current, -1) + 1 + e.o, e.i, e.t, e.d, e.m
             FROM unnest($4::int[], $5::int[], $6::uuid[], $7::text[], $8::jsonb[], $9::jsonb[]) WITH ORDINALITY AS e(k, o, i, t, d, m, n)
             JOIN verdict AS v ON v.k = e.k CROSS JOIN go
            WHERE v.whole AND go.go AND (v.known OR v.multi OR v.stream_id IN (SELECT stream_id FROM made))
            ORDER BY e.n
           RETURNING position, stream_id)`;

/** The group statement's answer: `extra`, more columns (each `, expression AS name`). */
const appendAnswer = (extra = '') => `SELECT go.go, me.tx::text AS me,
              (SELECT json_agg(json_build_object('k', k, 'current', current, 'ok', ok, 'known', known)) FROM verdict) AS verdicts,
              (SELECT array_agg(stream_id) FROM made) AS made,
              (SELECT json_agg(json_build_object('k', req.k, 'position', added.position::text) ORDER BY added.position)
                 FROM added JOIN req ON req.stream_id = added.stream_id) AS added,
              CASE WHEN EXISTS (SELECT 1 FROM added) THEN pg_notify('${CHANNEL}', '') END AS notified${extra}
         FROM go, me`;

const APPEND_GROUP = `${APPEND_WITH}\n${appendAnswer()}`;

/**
 * Each written unit's position (`u`, `pos`: its last event's, as {@link positionOf} writes it), for
 * the documents written with it: a clause of the group statement, after {@link APPEND_WITH}.
 */
const UNIT_POSITIONS = `unit_pos AS (
         SELECT req.u, '1' || lpad(me.tx::text, ${WIDTH}, '0') || ':' || lpad(max(added.position)::text, ${WIDTH}, '0') AS pos
           FROM added JOIN req ON req.stream_id = added.stream_id CROSS JOIN me GROUP BY req.u, me.tx)`;

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

/** Transactions holding a stream at once (see `appendHolding`): half the pool, the rest left to reads. */
const HOLDS = POOL_SIZE / 2;

/** Appends that stand or fall together: one `append`, or an `appendToStreams`' (distinct streams). */
interface PendingUnit {
  appends: readonly StreamAppend[];
  /** Documents to write with it (`appendWithViews`). */
  views?: InlineViews;
  /** `viewsWritten`: its documents were written with it. */
  resolve: (results: AppendResult[], viewsWritten: boolean) => void;
  reject: (error: unknown) => void;
}

/** What writing a group came to: units written, refused, and to try again (a stream created meanwhile). */
interface GroupOutcome<U = PendingUnit> {
  written: Array<{ unit: U; results: AppendResult[]; viewsWritten?: boolean }>;
  refused: Array<{ unit: U; error: WrongExpectedRevision }>;
  again?: U[];
}

/** The columns read (ordering by the table's own columns: `events.tx`, `events.position`, not these texts). */
const COLUMNS = 'tx::text AS tx, position::text AS position, stream_id, revision, event_id::text AS event_id, type, data, metadata';

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

/**
 * The EventStore on PostgreSQL (`DATABASE_URL`): one `events` table, one row per stream holding its
 * revision and its last writer (the expected-revision check, under the row's lock), each group of
 * appends one transaction acknowledged once PostgreSQL has committed it (its own fsync); appends of
 * every process write at once, in the order of their transactions (see {@link positionOf});
 * subscriptions wake on LISTEN/NOTIFY and poll.
 */
export class PostgresEventStore extends EventStore {
  readonly backend = 'postgresql';
  private readonly pool: Pool;
  private ready: Promise<void> | null = null;
  private closed = false;
  private readonly subscriptions = new Set<PostgresSubscription>();
  private listener: Client | null = null;
  /** Settles once {@link listener} listens, or has failed to. */
  private listening: Promise<void> = Promise.resolve();
  /** Appends waiting for the next group, and whether a group is being written. */
  private readonly pending: PendingUnit[] = [];
  private flushing = false;
  /** The transactions of {@link appendHolding} under way, each with one connection. */
  private readonly holds = new FairSlots(HOLDS);

  /** How often a subscription looks for new events without a notification. */
  readonly pollMs: number;

  constructor(
    private readonly url: string,
    options: { pollMs?: number } = {},
  ) {
    super();
    this.pollMs = options.pollMs ?? POLL_MS;
    if (!(this.pollMs >= 1)) throw new Error(`pollMs must be at least 1 ms, not ${options.pollMs}`);
    this.pool = servicePool(url, POOL_SIZE);
    // A client lost while idle is dropped by the pool; the error must not crash the process.
  }

  /**
   * Creates the tables on first use (once per process). Looked for first: DDL on an existing table
   * still takes its lock, and would wait behind every append in flight.
   */
  private schema(): Promise<void> {
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

  override readonly atomicAcrossStreams = true;

  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (!events.length) throw new Error('append needs at least one event');
    return (await this.enqueue([{ streamId, events, expected }]))[0];
  }

  /** The appends as one unit of a group: written in its transaction only if every one of them is at its expected revision. */
  override async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    checkStreamAppends(appends);
    return this.enqueue(appends);
  }

  /** Where {@link appendWithViews} writes documents: the view store of the same database, once given. */
  private inlineViews: InlineViewTables | null = null;

  /** Writes the documents given with appends into `views`' tables, in the appends' transaction (the same database). */
  writeViewsInto(views: InlineViewTables): void {
    this.inlineViews = views;
  }

  override get writesViews(): boolean {
    return this.inlineViews !== null;
  }

  /**
   * The appends as one unit of a group, with the documents `views` written in the group's statement
   * when it is the one-statement kind (streams named once in the group; else, or when held, the
   * documents are left out and `viewsWritten` is false).
   */
  override async appendWithViews(
    appends: readonly StreamAppend[],
    views: InlineViews,
  ): Promise<{ results: AppendResult[]; viewsWritten: boolean }> {
    checkStreamAppends(appends);
    let viewsWritten = false;
    const results = await this.enqueue(
      appends,
      this.inlineViews && views.length ? views : undefined,
      (written) => (viewsWritten = written),
    );
    return { results, viewsWritten };
  }

  private async enqueue(
    appends: readonly StreamAppend[],
    views?: InlineViews,
    told?: (viewsWritten: boolean) => void,
  ): Promise<AppendResult[]> {
    await this.schema();
    return new Promise((resolve, reject) => {
      const done = (results: AppendResult[], viewsWritten: boolean) => {
        told?.(viewsWritten);
        resolve(results);
      };
      this.pending.push({ appends, views, resolve: done, reject });
      // The first group leaves at the end of this turn of the loop, so that the appends its code
      // starts together (a purchase's lock, record and hold) share one commit instead of two.
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Writes the units waiting, as groups of at most {@link MAX_GROUP}, one transaction each, until none waits. */
  private async flush(): Promise<void> {
    try {
      while (this.pending.length) await this.writeGroup(this.pending.splice(0, MAX_GROUP));
    } finally {
      this.flushing = false;
    }
  }

  /**
   * One transaction for a group of units (group commit: one commit for them all). The rows of the
   * streams it writes are locked first, in one order (no deadlock between groups), so no other
   * transaction changes them meanwhile; each append's expected revision is checked against them,
   * in arrival order, and a refused unit fails alone. Started again, whole, when another
   * transaction turns out to have written one of its streams since this one began (see
   * {@link writeOnce}).
   */
  private async writeGroup(group: PendingUnit[]): Promise<void> {
    const started = performance.now();
    let left = group;
    for (let attempt = 1; left.length; attempt++) {
      try {
        const streams = left.flatMap((unit) => unit.appends.map((a) => a.streamId));
        const distinct = new Set(streams).size === streams.length;
        const { written, refused, again = [] } = distinct ? await this.writeStatement(left) : await this.writeOnce(left);
        for (const { unit, error } of refused) unit.reject(error);
        const appends = written.reduce((sum, { unit }) => sum + unit.appends.length, 0);
        if (appends) this.reportCommitted(appends, (performance.now() - started) / 1000);
        for (const { unit, results, viewsWritten } of written) {
          for (const append of unit.appends) this.reportAppended(append.events);
          unit.resolve(results, viewsWritten === true);
        }
        if (again.length && attempt >= GROUP_ATTEMPTS) throw new GroupRetry('another transaction created one of the streams first');
        left = again;
      } catch (error) {
        if (error instanceof GroupRetry && attempt < GROUP_ATTEMPTS) {
          // Other processes' transactions on these streams: let them through before the next try.
          if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** attempt));
          continue;
        }
        const failure =
          error instanceof GroupRetry ? new StoreBusy(`appends not ordered after ${GROUP_ATTEMPTS} tries: ${error.message}`) : error;
        for (const unit of left) unit.reject(failure);
        return;
      }
    }
  }

  /**
   * A group whose appends name different streams (the command engine's: one write a stream at a
   * time) as one statement, its own transaction: one round trip. It locks the streams' rows in one
   * order, checks each append's expected revision (a unit with one refused writes nothing), and
   * writes the accepted units' stream rows, events and notice, unless the last writer of one of the
   * streams began after it ({@link GroupRetry}, nothing written). A lone append whose new stream
   * another transaction created meanwhile writes nothing and is tried again (`again`); the rest
   * stand. Such a stream of a unit of several appends fails the statement, and the group is tried again.
   */
  private async writeStatement<U extends Pick<PendingUnit, 'appends' | 'views'>>(
    group: readonly U[],
    on: Pool | PoolClient = this.pool,
  ): Promise<GroupOutcome<U>> {
    const appends = group.flatMap((unit, u) => unit.appends.map((append) => ({ append, u: u + 1 })));
    const events = appends.flatMap(({ append }, k) => append.events.map((event, offset) => ({ k: k + 1, offset, event })));
    const values = [
      appends.map(({ append }) => append.streamId),
      appends.map(({ append: { expected } }) => (expected === 'any' ? ANY_REVISION : expected === 'no_stream' ? NO_STREAM : expected)),
      appends.map(({ append }) => append.events.length),
      events.map((e) => e.k),
      events.map((e) => e.offset),
      ...eventColumns(events),
      appends.map(({ u }) => u),
    ];
    const withViews = this.statementWithViews(group, values);
    const answer = await on
      .query<{
        go: boolean;
        me: string;
        verdicts: Array<{ k: number; current: number | null; ok: boolean; known: boolean }>;
        made: string[] | null;
        added: Array<{ k: number; position: string }> | null;
        views_current?: boolean;
      }>(withViews ?? { name: 'deals_append_units', text: APPEND_GROUP, values })
      .catch((error: unknown) => {
        const code = (error as { code?: string }).code ?? '';
        // A unit's new stream made meanwhile by another transaction; else not expected (known streams
        // are written under their locks), but a retry is the answer.
        if ([UNIQUE_VIOLATION, DEADLOCK].includes(code)) throw new GroupRetry(String(error));
        // The documents refused (a view's table dropped since this process last looked, when a
        // rebuild replaced it elsewhere; a document the server would not take): the statement wrote
        // nothing, and the appends go again without their documents, which their requests then
        // write after or wait for. Appends made after a charge are not failed by a view.
        if (withViews && refusedDocuments(code)) return null;
        throw error;
      });
    if (answer === null)
      return this.writeStatement(
        group.map((unit) => ({ ...unit, views: undefined })),
        on,
      );
    const [{ go, me, verdicts, made, added, views_current: viewsCurrent = false }] = answer.rows;
    if (!go) throw new GroupRetry('a later transaction wrote one of the streams first');
    const verdictOf = new Map(verdicts.map((v) => [v.k, v]));
    const created = new Set(made ?? []);
    const last = new Map<number, string>();
    for (const { k, position } of added ?? []) last.set(k, position);
    const outcome: Required<GroupOutcome<U>> = { written: [], refused: [], again: [] };
    let k = 0;
    for (const unit of group) {
      const ks = unit.appends.map(() => ++k);
      const refusedAt = ks.findIndex((key) => !verdictOf.get(key)!.ok);
      if (refusedAt >= 0) {
        const { streamId, expected } = unit.appends[refusedAt];
        const error = new WrongExpectedRevision(streamId, expected, verdictOf.get(ks[refusedAt])!.current ?? 'no_stream');
        outcome.refused.push({ unit, error });
        continue;
      }
      const lone = unit.appends.length === 1;
      if (lone && !verdictOf.get(ks[0])!.known && !created.has(unit.appends[0].streamId)) {
        outcome.again.push(unit);
        continue;
      }
      const results = unit.appends.map((append, i) => ({
        nextExpectedRevision: (verdictOf.get(ks[i])!.current ?? -1) + append.events.length,
        position: positionOf({ tx: me, position: last.get(ks[i])! }),
      }));
      outcome.written.push({ unit, results, viewsWritten: viewsCurrent && unit.views !== undefined });
    }
    return outcome;
  }

  /**
   * The group statement with the documents its units carry (`appendWithViews`), each stamped with
   * its unit's last position; named by its text (the tables' generations are in it), so each
   * connection plans each kind once. Null when none carries any, or a collection is not one the
   * view store knows.
   */
  private statementWithViews(group: ReadonlyArray<Pick<PendingUnit, 'views'>>, values: unknown[]) {
    if (!this.inlineViews || !group.some((unit) => unit.views?.length)) return null;
    const byCollection = new Map<string, Array<{ unit: number; doc: ViewDocument }>>();
    group.forEach(({ views }, i) => {
      for (const { collection, documents } of views ?? []) {
        let docs = byCollection.get(collection);
        if (!docs) byCollection.set(collection, (docs = []));
        for (const doc of documents) docs.push({ unit: i + 1, doc });
      }
    });
    const params = [...values];
    const param = (value: unknown) => `$${params.push(value)}`;
    const writes = this.inlineViews.inlineWrites(
      [...byCollection].map(([collection, documents]) => ({ collection, documents })),
      param,
      'unit_pos',
    );
    if (!writes) return null;
    const text = `${APPEND_WITH},\n${UNIT_POSITIONS},\n${writes.clauses.join(',\n')}\n${appendAnswer(`,\n ${writes.current} AS views_current`)}`;
    return { name: `deals_append_views_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text, values: params };
  }

  /**
   * Writes the group in one transaction: the units accepted, with their results, once committed
   * (the others are rejected here). A stream's events must follow in the log's order the events
   * already in it, so when the last transaction to write one of the group's streams has a later id
   * than this one (it began later and committed first), or another transaction created one of its
   * new streams meanwhile, this transaction is abandoned for a new one ({@link GroupRetry}).
   */
  private async writeOnce(group: PendingUnit[]): Promise<GroupOutcome> {
    let client: PoolClient | null = null;
    let broken: Error | undefined;
    try {
      client = await this.pool.connect();
      await client.query('BEGIN');
      const streams = [...new Set(group.flatMap((unit) => unit.appends.map((a) => a.streamId)))].sort();
      const found = await client.query<{ stream_id: string; revision: number; later: boolean; me: string }>(
        `SELECT s.stream_id, s.revision, s.tx > me.tx AS later, me.tx::text AS me
           FROM (SELECT pg_current_xact_id() AS tx) AS me
           LEFT JOIN LATERAL (SELECT stream_id, revision, tx FROM event_streams WHERE stream_id = ANY($1::text[]) ORDER BY stream_id FOR UPDATE) AS s ON true`,
        [streams],
      );
      if (found.rows.some((r) => r.later)) throw new GroupRetry('a later transaction wrote one of the streams first');
      const me = found.rows[0].me;
      const existing = new Set<string>();
      const revisions = new Map<string, number>();
      for (const row of found.rows)
        if (row.stream_id !== null) {
          existing.add(row.stream_id);
          revisions.set(row.stream_id, row.revision);
        }
      const accepted: Array<{ unit: PendingUnit; firsts: number[] }> = [];
      const refused: Array<{ unit: PendingUnit; error: WrongExpectedRevision }> = [];
      for (const unit of group) {
        const currents = unit.appends.map((a) => revisions.get(a.streamId));
        const refusedAt = unit.appends.findIndex(
          ({ expected }, i) => !(expected === 'any' || (expected === 'no_stream' ? currents[i] === undefined : currents[i] === expected)),
        );
        if (refusedAt >= 0) {
          const { streamId, expected } = unit.appends[refusedAt];
          refused.push({ unit, error: new WrongExpectedRevision(streamId, expected, currents[refusedAt] ?? 'no_stream') });
          continue;
        }
        const firsts = unit.appends.map((append, i) => {
          const first = (currents[i] ?? -1) + 1;
          revisions.set(append.streamId, first + append.events.length - 1);
          return first;
        });
        accepted.push({ unit, firsts });
      }
      if (!accepted.length) {
        await client.query('ROLLBACK');
        return { written: [], refused };
      }
      const touched = [...new Set(accepted.flatMap(({ unit }) => unit.appends.map((a) => a.streamId)))];
      const updated = touched.filter((id) => existing.has(id));
      const created = touched.filter((id) => !existing.has(id));
      const rows = accepted.flatMap(({ unit, firsts }) =>
        unit.appends.flatMap((append, a) =>
          append.events.map((event, i) => ({ streamId: append.streamId, revision: firsts[a] + i, event })),
        ),
      );
      // One statement: the streams' rows, the events (sequence numbers drawn in the rows' order, WITH
      // ORDINALITY, so each append's come back together) and the notice that wakes the subscriptions.
      const inserted = await client.query<{ created: number; positions: string[] }>(
        `WITH moved AS (
           UPDATE event_streams AS s SET revision = u.revision, tx = pg_current_xact_id()
             FROM unnest($1::text[], $2::int[]) AS u(stream_id, revision) WHERE s.stream_id = u.stream_id
         ),
         made AS (
           INSERT INTO event_streams (stream_id, revision, tx)
             SELECT id, r, pg_current_xact_id() FROM unnest($3::text[], $4::int[]) AS n(id, r)
             ON CONFLICT (stream_id) DO NOTHING RETURNING 1
         ),
         added AS (
           INSERT INTO events (stream_id, revision, event_id, type, data, metadata)
             SELECT s, r, i, t, d, m FROM unnest($5::text[], $6::int[], $7::uuid[], $8::text[], $9::jsonb[], $10::jsonb[])
               WITH ORDINALITY AS x(s, r, i, t, d, m, n) ORDER BY n
             RETURNING position
         )
         SELECT (SELECT count(*)::int FROM made) AS created,
                (SELECT array_agg(position::text ORDER BY position) FROM added) AS positions,
                pg_notify('${CHANNEL}', '')`,
        [
          updated,
          updated.map((id) => revisions.get(id)!),
          created,
          created.map((id) => revisions.get(id)!),
          rows.map((r) => r.streamId),
          rows.map((r) => r.revision),
          ...eventColumns(rows),
        ],
      );
      if (inserted.rows[0].created !== created.length) throw new GroupRetry('another transaction created one of the streams first');
      await client.query('COMMIT');
      const positions = inserted.rows[0].positions;
      let at = 0;
      const written = accepted.map(({ unit, firsts }) => {
        const results = unit.appends.map((append, a) => {
          at += append.events.length;
          return {
            nextExpectedRevision: firsts[a] + append.events.length - 1,
            position: positionOf({ tx: me, position: positions[at - 1] }),
          };
        });
        return { unit, results };
      });
      return { written, refused };
    } catch (error) {
      // A connection that cannot roll back (lost, timed out) is dropped, not given back to the pool.
      await client?.query('ROLLBACK').catch((failed: Error) => (broken = failed));
      // Another transaction created one of the new streams and wrote its first events meanwhile.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION)
        throw new GroupRetry('another transaction created one of the streams first');
      throw error;
    } finally {
      client?.release(broken);
    }
  }

  /**
   * The appends `decide` returns, written in a transaction that first locks `held`'s stream row:
   * every other append to that stream (each locks the row first too) waits from the moment `decide`
   * is called until this commits, so what `decide` reads of it (on any connection: the lock is taken
   * after every earlier write committed) is what the write finds. Nothing is written, and StoreBusy
   * thrown, when a later transaction wrote one of the other streams first or made one of its new
   * streams meanwhile. At most {@link HOLDS} at once, so that the reads of `decide` find connections.
   */
  override async appendHolding(held: string, decide: () => Promise<readonly StreamAppend[]>): Promise<AppendResult[]> {
    await this.schema();
    return this.holds.run(held, async () => {
      const started = performance.now();
      const client = await this.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        await client.query({
          name: 'deals_hold_stream',
          text: 'SELECT 1 FROM event_streams WHERE stream_id = $1 FOR UPDATE',
          values: [held],
        });
        const appends = await decide();
        if (!appends.length) {
          await client.query('ROLLBACK');
          return [];
        }
        checkStreamAppends(appends);
        const { written, refused, again } = await this.writeStatement([{ appends }], client).catch((error: unknown) => {
          throw error instanceof GroupRetry ? new StoreBusy(error.message) : error;
        });
        if (refused.length) throw refused[0].error;
        if (again?.length) throw new StoreBusy('another transaction created the stream first');
        await client.query('COMMIT');
        this.reportCommitted(appends.length, (performance.now() - started) / 1000);
        for (const append of appends) this.reportAppended(append.events);
        return written[0].results;
      } catch (error) {
        await client.query('ROLLBACK').catch((failed: Error) => (broken = failed));
        throw error;
      } finally {
        client.release(broken);
      }
    });
  }

  async readStream(streamId: string, fromRevision: StreamRevision = 0): Promise<RecordedEvent[]> {
    await this.schema();
    const found = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision`, [
      streamId,
      fromRevision,
    ]);
    return found.rows.map(recorded);
  }

  /**
   * Events after `after` in the log's order, up to the oldest transaction still running (see
   * {@link positionOf}): an event committed above it is read once every transaction before it has
   * ended, so no page is ever followed by an event that belongs before it.
   */
  async readAll({ after, maxCount }: { after: LogPosition | null; maxCount: number }): Promise<RecordedEvent[]> {
    return (await this.readPage(after, maxCount)).events;
  }

  /**
   * {@link readAll}, and whether events committed after the page are held back by the horizon (a
   * transaction begun before theirs still running, perhaps one that writes no event and so will
   * send no notice when it ends): a subscription then reads again soon instead of waiting.
   */
  async readPage(after: LogPosition | null, maxCount: number): Promise<{ events: RecordedEvent[]; heldBack: boolean }> {
    await this.schema();
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
  override async countByType(): Promise<Map<string, number>> {
    await this.schema();
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
  override async readTypes({ after, maxCount, types }: TypesRead): Promise<TypesPage> {
    await this.schema();
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

  override async countAfter(after: LogPosition | null, limit = Number.POSITIVE_INFINITY): Promise<number> {
    await this.schema();
    const [tx, position] = orderOf(after);
    const found = await this.pool.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM (SELECT 1 FROM events WHERE (tx, position) > ($1::xid8, $2::bigint) LIMIT $3) AS counted`,
      [tx, position, Number.isFinite(limit) ? limit : null],
    );
    return Number(found.rows[0].n);
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    const subscription = new PostgresSubscription(this, options, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    subscription.start();
    return subscription;
  }

  /**
   * One LISTEN connection for all of this store's subscriptions (a worker runs one a view): a
   * notification wakes them all. Resolves once it listens, so that a read after it misses no
   * notice; lost, it is opened again on the next subscription's poll, and every subscription reads
   * again once it listens (what was committed meanwhile sent no notice it heard).
   */
  listen(): Promise<void> {
    if (this.closed || !this.subscriptions.size) return Promise.resolve();
    if (this.listener) return this.listening;
    const client = sessionClient(this.url);
    this.listener = client;
    client.on('error', () => {
      if (this.listener !== client) return;
      this.listener = null;
      void client.end().catch(() => undefined);
      // Notices are unheard until it listens again: the subscriptions open it again, and read.
      this.wakeAll();
    });
    client.on('notification', () => this.wakeAll());
    this.listening = (async () => {
      try {
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
        if (this.listener === client) this.wakeAll();
      } catch {
        if (this.listener === client) this.listener = null;
        await client.end().catch(() => undefined);
      }
    })();
    return this.listening;
  }

  private wakeAll(): void {
    for (const subscription of this.subscriptions) subscription.wakeUp();
  }

  async head(): Promise<LogPosition | null> {
    await this.schema();
    const found = await this.pool.query<{ tx: string; position: string }>(
      'SELECT tx::text AS tx, position::text AS position FROM events ORDER BY events.tx DESC, events.position DESC LIMIT 1',
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
    // The listener first: a subscription may be waiting for it to connect.
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.pool.end();
  }
}

/** A catch-up subscription: reads pages after its position, then waits for a notification or the poll. */
class PostgresSubscription implements LogSubscription {
  private closed = false;
  /** Ends the current wait early. */
  private wake: (() => void) | null = null;
  /** A notification came since the last read began: the next wait is skipped (it may have come mid-read). */
  private woken = false;
  /** The last read failed: its wait is the poll's whole, whatever notices come meanwhile. */
  private backingOff = false;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: PostgresEventStore,
    private readonly options: SubscribeOptions,
    private readonly forget: () => void,
  ) {}

  /** Starts reading (once the store counts it among its subscriptions, so that it listens for it). */
  start(): void {
    this.done = this.run();
  }

  /** New events may be there (a notification came). */
  wakeUp(): void {
    this.woken = true;
    if (!this.backingOff) this.wake?.();
  }

  private async run(): Promise<void> {
    let after = this.options.after;
    while (!this.closed) {
      let wait = this.store.pollMs;
      let failed = false;
      try {
        await this.store.listen();
        this.woken = false;
        const { events: page, heldBack } = await this.store.readPage(after, PAGE);
        if (this.closed) break;
        if (page.length) {
          await this.options.onEvents(page);
          after = page[page.length - 1].position;
          continue;
        }
        if (heldBack) wait = HELD_BACK_MS;
      } catch (error) {
        failed = true;
        this.options.onError?.(error);
      }
      if (this.woken && !failed) continue;
      this.backingOff = failed;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
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
