import type { ViewLeases } from '@deals/kernel';
import type { Pool } from 'pg';

/** The leases' tables, made with the views' other tables. */
export const LEASE_TABLES = `
CREATE TABLE IF NOT EXISTS view_keepers (keeper text PRIMARY KEY, seen_until timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS view_leases (collection text PRIMARY KEY, keeper text, expires_at timestamptz NOT NULL DEFAULT '-infinity');
`;

/** How long a keeper that stopped renewing stays on record (it no longer counts once lapsed). */
const FORGET_KEEPERS = `interval '1 hour'`;

/**
 * The views' leases in PostgreSQL: a row a keeping process (`view_keepers`, alive until
 * `seen_until`) and a row a view (`view_leases`, held by `keeper` until `expires_at`). Times are
 * the server's, so the keepers' clocks do not matter. One balance is one short transaction; two at
 * once each take different free views (SKIP LOCKED).
 */
export class PostgresViewLeases implements ViewLeases {
  constructor(
    private readonly pool: Pool,
    private readonly ready: () => Promise<void>,
  ) {}

  async balance(keeper: string, collections: readonly string[], ttlMs: number): Promise<string[]> {
    await this.ready();
    const client = await this.pool.connect();
    let broken: Error | undefined;
    const until = `clock_timestamp() + make_interval(secs => $2::float8 / 1000)`;
    try {
      await client.query('BEGIN');
      // The CTEs' writes are not seen by the outer SELECT: the others alive, plus this one.
      const { rows: counted } = await client.query<{ live: number }>(
        `WITH here AS (INSERT INTO view_keepers AS k (keeper, seen_until) VALUES ($1, ${until})
                       ON CONFLICT (keeper) DO UPDATE SET seen_until = EXCLUDED.seen_until),
              gone AS (DELETE FROM view_keepers WHERE seen_until < clock_timestamp() - ${FORGET_KEEPERS}),
              made AS (INSERT INTO view_leases (collection) SELECT unnest($3::text[]) ON CONFLICT (collection) DO NOTHING)
         SELECT count(*)::int + 1 AS live FROM view_keepers WHERE keeper <> $1 AND seen_until >= clock_timestamp()`,
        [keeper, ttlMs, collections],
      );
      const fair = Math.ceil(collections.length / counted[0].live);
      const { rows: renewed } = await client.query<{ collection: string }>(
        `UPDATE view_leases SET expires_at = ${until} WHERE keeper = $1 AND collection = ANY($3::text[]) RETURNING collection`,
        [keeper, ttlMs, collections],
      );
      const held = renewed.map((r) => r.collection).sort();
      if (held.length > fair) {
        const given = held.splice(fair);
        await client.query(
          `UPDATE view_leases SET keeper = NULL, expires_at = '-infinity' WHERE keeper = $1 AND collection = ANY($2::text[])`,
          [keeper, given],
        );
      } else if (held.length < fair) {
        const { rows: taken } = await client.query<{ collection: string }>(
          `UPDATE view_leases SET keeper = $1, expires_at = ${until}
            WHERE collection IN (SELECT collection FROM view_leases
                                  WHERE collection = ANY($3::text[]) AND (keeper IS NULL OR expires_at < clock_timestamp())
                                  ORDER BY collection LIMIT $4 FOR UPDATE SKIP LOCKED)
            RETURNING collection`,
          [keeper, ttlMs, collections, fair - held.length],
        );
        held.push(...taken.map((r) => r.collection));
      }
      await client.query('COMMIT');
      return held.sort();
    } catch (error) {
      // A connection that cannot roll back is dropped, not returned to the pool.
      await client.query('ROLLBACK').catch((failed: Error) => (broken = failed));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async leave(keeper: string): Promise<void> {
    await this.ready();
    await this.pool.query(
      `WITH gone AS (DELETE FROM view_keepers WHERE keeper = $1)
       UPDATE view_leases SET keeper = NULL, expires_at = '-infinity' WHERE keeper = $1`,
      [keeper],
    );
  }
}
