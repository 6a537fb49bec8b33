import { WrongExpectedRevision } from '@deals/kernel';
import { Pool, PoolClient } from 'pg';
import { CHANNEL, positionOf } from './postgres-event-log.schema';
import { eventColumns, GroupOutcome, GroupRetry, PendingUnit, UNIQUE_VIOLATION } from './postgres-event-log.append-sql';

/**
 * Writes the group in one transaction: the units accepted, with their results, once committed
 * (the others are rejected here). A stream's events must follow in the log's order the events
 * already in it, so when the last transaction to write one of the group's streams has a later id
 * than this one (it began later and committed first), or another transaction created one of its
 * new streams meanwhile, this transaction is abandoned for a new one ({@link GroupRetry}).
 */
export async function writeOnce(pool: Pool, group: PendingUnit[]): Promise<GroupOutcome> {
  let client: PoolClient | null = null;
  let broken: Error | undefined;
  try {
    client = await pool.connect();
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
      unit.appends.flatMap((append, a) => append.events.map((event, i) => ({ streamId: append.streamId, revision: firsts[a] + i, event }))),
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
