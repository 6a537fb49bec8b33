import { AppendResult, InlineViews, NewEvent, StreamAppend, WrongExpectedRevision } from '@deals/kernel';
import { CHANNEL } from './postgres-event-log.schema';

/** The id, type, data and metadata columns of events to insert, as the statements' array parameters. */
export const eventColumns = (rows: ReadonlyArray<{ event: NewEvent }>) => [
  rows.map((r) => r.event.id),
  rows.map((r) => r.event.type),
  rows.map((r) => JSON.stringify(r.event.data)),
  rows.map((r) => JSON.stringify(r.event.metadata)),
];

/** Raised inside a group's transaction when another transaction's commit makes it start again. */
export class GroupRetry extends Error {}

export const UNIQUE_VIOLATION = '23505';
export const DEADLOCK = '40P01';

/** An expected revision in SQL: `any`, `no_stream`, or the revision itself (0 or more). */
export const ANY_REVISION = -2;
export const NO_STREAM = -1;

/**
 * A group of appends to distinct streams as one statement (see `writeStatement`); named, so each
 * connection plans it once. Appends of one unit (`$10`, an appendToStreams') stand or fall
 * together: written only if every one of them is at its expected revision; their new streams are
 * made without `ON CONFLICT`, so one made meanwhile by another transaction fails the whole statement
 * (then tried again) instead of leaving the unit half written.
 */
export const APPEND_WITH = `WITH me AS (SELECT pg_current_xact_id() AS tx),
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
export const appendAnswer = (extra = '') => `SELECT go.go, me.tx::text AS me,
              (SELECT json_agg(json_build_object('k', k, 'current', current, 'ok', ok, 'known', known)) FROM verdict) AS verdicts,
              (SELECT array_agg(stream_id) FROM made) AS made,
              (SELECT json_agg(json_build_object('k', req.k, 'position', added.position::text) ORDER BY added.position)
                 FROM added JOIN req ON req.stream_id = added.stream_id) AS added,
              CASE WHEN EXISTS (SELECT 1 FROM added) THEN pg_notify('${CHANNEL}', '') END AS notified${extra}
         FROM go, me`;

export const APPEND_GROUP = `${APPEND_WITH}\n${appendAnswer()}`;

/** Appends that stand or fall together: one `appendToStreams`' (distinct streams). */
export interface PendingUnit {
  appends: readonly StreamAppend[];
  /** Documents to write with it (`appendWithViews`). */
  views?: InlineViews;
  /** `viewsWritten`: its documents were written with it. */
  resolve: (results: AppendResult[], viewsWritten: boolean) => void;
  reject: (error: unknown) => void;
}

/** What writing a group came to: units written, refused, and to try again (a stream created meanwhile). */
export interface GroupOutcome<U = PendingUnit> {
  written: Array<{ unit: U; results: AppendResult[]; viewsWritten?: boolean }>;
  refused: Array<{ unit: U; error: WrongExpectedRevision }>;
  again?: U[];
}
