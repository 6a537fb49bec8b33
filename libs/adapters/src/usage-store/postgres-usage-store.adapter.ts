import { servicePool } from '../postgres-pool';
import { DailyUsage, UsageDelta, UsageStore } from '@deals/kernel';
import { Pool } from 'pg';
import { schemaOnce } from '../postgres-schema';
import { inTransaction } from '../postgres-transaction';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS partner_usage (
  partner_id text NOT NULL,
  day text NOT NULL,
  status integer NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (partner_id, day, status)
);
CREATE INDEX IF NOT EXISTS partner_usage_by_day ON partner_usage (day);
CREATE TABLE IF NOT EXISTS credential_last_use (
  partner_id text NOT NULL,
  credential_id text NOT NULL,
  last_used bigint NOT NULL,
  PRIMARY KEY (partner_id, credential_id)
);
`;
const SCHEMA_LOCK = 7216006;

// Rows of one key are summed first (an upsert may not touch a row twice), and written in key order:
// two replicas flushing at once lock their common rows in the same order, so never deadlock.
const ADD_REQUESTS = `
INSERT INTO partner_usage (partner_id, day, status, count)
SELECT partner_id, day, status, sum(count) FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[]) AS t (partner_id, day, status, count)
GROUP BY partner_id, day, status ORDER BY partner_id, day, status
ON CONFLICT (partner_id, day, status) DO UPDATE SET count = partner_usage.count + excluded.count`;
const ADD_LAST_USED = `
INSERT INTO credential_last_use (partner_id, credential_id, last_used)
SELECT partner_id, credential_id, max(last_used) FROM unnest($1::text[], $2::text[], $3::bigint[]) AS t (partner_id, credential_id, last_used)
GROUP BY partner_id, credential_id ORDER BY partner_id, credential_id
ON CONFLICT (partner_id, credential_id) DO UPDATE SET last_used = GREATEST(credential_last_use.last_used, excluded.last_used)`;

/**
 * Usage figures in the PostgreSQL database that holds the log (tables `partner_usage` and
 * `credential_last_use`), summed by every replica's flushes.
 */
export class PostgresUsageStore extends UsageStore {
  private readonly pool: Pool;
  private readonly schema: () => Promise<void>;

  constructor(url: string) {
    super();
    this.pool = servicePool(url, 2);
    this.schema = schemaOnce(this.pool, 'credential_last_use', SCHEMA_LOCK, SCHEMA);
  }

  async add({ requests, lastUsed }: UsageDelta): Promise<void> {
    if (requests.length === 0 && lastUsed.length === 0) return;
    await this.schema();
    await inTransaction(this.pool, async (client) => {
      if (requests.length > 0)
        await client.query(ADD_REQUESTS, [
          requests.map((r) => r.partnerId),
          requests.map((r) => r.day),
          requests.map((r) => r.status),
          requests.map((r) => r.count),
        ]);
      if (lastUsed.length > 0)
        await client.query(ADD_LAST_USED, [
          lastUsed.map((u) => u.partnerId),
          lastUsed.map((u) => u.credentialId),
          lastUsed.map((u) => u.minute),
        ]);
    });
  }

  async dailyUsage(partnerId: string, days: readonly string[]): Promise<DailyUsage[]> {
    await this.schema();
    const { rows } = await this.pool.query<{ day: string; status: number; count: string }>(
      'SELECT day, status, count FROM partner_usage WHERE partner_id = $1 AND day = ANY($2::text[]) ORDER BY day, status',
      [partnerId, days],
    );
    const byDay = new Map<string, DailyUsage>();
    for (const { day, status, count } of rows) {
      let usage = byDay.get(day);
      if (!usage) byDay.set(day, (usage = { day, byStatus: {} }));
      usage.byStatus[String(status)] = Number(count);
    }
    return [...byDay.values()];
  }

  async lastUsed(partnerId: string): Promise<Record<string, number>> {
    await this.schema();
    const { rows } = await this.pool.query<{ credential_id: string; last_used: string }>(
      'SELECT credential_id, last_used FROM credential_last_use WHERE partner_id = $1',
      [partnerId],
    );
    return Object.fromEntries(rows.map((row) => [row.credential_id, Number(row.last_used)]));
  }

  async purgeBefore(day: string): Promise<void> {
    await this.schema();
    await this.pool.query('DELETE FROM partner_usage WHERE day < $1', [day]);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
