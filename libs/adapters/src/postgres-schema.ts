import type { Pool } from 'pg';

/**
 * Makes an adapter's tables once per pool, under a transaction-level advisory lock (two replicas
 * starting together must not both make them), and only when `table` is missing: DDL on a table in
 * use waits for its locks. A failure is not kept: the next call tries again.
 */
export function schemaOnce(pool: Pool, table: string, lock: number, ddl: string): () => Promise<void> {
  let ready: Promise<void> | null = null;
  return () => {
    ready ??= pool
      .query<{ made: boolean }>('SELECT to_regclass($1) IS NOT NULL AS made', [table])
      .then(async ({ rows }) => {
        if (!rows[0].made) await pool.query(`SELECT pg_advisory_xact_lock(${lock}); ${ddl}`);
      })
      .catch((error: unknown) => {
        ready = null;
        throw error;
      });
    return ready;
  };
}
