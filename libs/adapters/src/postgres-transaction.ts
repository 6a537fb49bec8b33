import type { Pool, PoolClient } from 'pg';

/** Runs `body` in one transaction on a client of the pool: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: Pool, body: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await body(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot roll back (lost, timed out) is dropped, not given back to the pool.
    await client.query('ROLLBACK').catch((failed: Error) => (broken = failed));
    throw error;
  } finally {
    client.release(broken);
  }
}
