import { PersonalKeyStore } from '@deals/kernel';
import DataLoader from 'dataloader';
import { Pool } from 'pg';
import { randomBytes } from 'node:crypto';
import { servicePool } from '../postgres-pool';
import { schemaOnce } from '../postgres-schema';
import { inTransaction } from '../postgres-transaction';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS personal_data_keys (user_id text PRIMARY KEY, key bytea NOT NULL);
CREATE TABLE IF NOT EXISTS erased_users (user_id text PRIMARY KEY, erased_at timestamptz NOT NULL);
`;
const SCHEMA_LOCK = 7216008;
/** The advisory lock space of a user's key: its making and its erasure never interleave. */
const KEY_LOCK = 7216009;
/** Most users whose keys one statement reads. */
const MAX_READ = 500;

/**
 * The personal-data keys in the PostgreSQL database that holds the log (`personal_data_keys`), and
 * the users erased (`erased_users`): a key is made and a user erased under a lock of that user, so
 * no key is ever made beside an erasure. A deleted row is gone from every query at once; its bytes
 * stay in the table's pages until PostgreSQL's vacuum reuses them.
 */
export class PostgresPersonalKeyStore extends PersonalKeyStore {
  private readonly pool: Pool;
  private readonly schema: () => Promise<void>;
  /** The keys asked for in one turn of the event loop (a page of the log, the appends of many requests), read in one statement. */
  private readonly keys: DataLoader<string, { key: Buffer | null; erased: boolean }>;

  constructor(url: string) {
    super();
    this.pool = servicePool(url, 2);
    this.schema = schemaOnce(this.pool, 'personal_data_keys', SCHEMA_LOCK, SCHEMA);
    this.keys = new DataLoader((userIds) => this.readKeys(userIds), { cache: false, maxBatchSize: MAX_READ });
  }

  async keyFor(userId: string): Promise<Buffer | null> {
    const { key, erased } = await this.keyOf(userId);
    if (key || erased) return key;
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [KEY_LOCK, userId]);
      const { rows } = await client.query<{ key: Buffer }>(
        `INSERT INTO personal_data_keys (user_id, key)
         SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM erased_users WHERE user_id = $1)
         ON CONFLICT (user_id) DO UPDATE SET key = personal_data_keys.key
         RETURNING key`,
        [userId, randomBytes(32)],
      );
      return rows[0]?.key ?? null;
    });
  }

  keyOf(userId: string): Promise<{ key: Buffer | null; erased: boolean }> {
    return this.keys.load(userId);
  }

  private async readKeys(userIds: readonly string[]): Promise<Array<{ key: Buffer | null; erased: boolean }>> {
    await this.schema();
    const { rows } = await this.pool.query<{ key: Buffer | null; erased: boolean }>({
      // Named: each connection plans it once.
      name: 'deals_read_keys',
      text: `SELECT k.key, e.user_id IS NOT NULL AS erased
         FROM unnest($1::text[]) WITH ORDINALITY AS asked(user_id, n)
         LEFT JOIN personal_data_keys k ON k.user_id = asked.user_id
         LEFT JOIN erased_users e ON e.user_id = asked.user_id
        ORDER BY asked.n`,
      values: [userIds],
    });
    return rows.map((row) => ({ key: row.key, erased: row.erased }));
  }

  async keptOf(userIds: readonly string[]): Promise<string[]> {
    await this.schema();
    const { rows } = await this.pool.query<{ user_id: string }>('SELECT user_id FROM personal_data_keys WHERE user_id = ANY($1::text[])', [
      userIds,
    ]);
    return rows.map((row) => row.user_id);
  }

  async erase(userId: string, erasedAt: Date): Promise<void> {
    await this.schema();
    await inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [KEY_LOCK, userId]);
      await client.query('INSERT INTO erased_users (user_id, erased_at) VALUES ($1, $2) ON CONFLICT DO NOTHING', [userId, erasedAt]);
      await client.query('DELETE FROM personal_data_keys WHERE user_id = $1', [userId]);
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
