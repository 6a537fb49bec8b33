import { servicePool } from '../postgres-pool';
import { SnapshotStore, StoredSnapshot, StreamRevision } from '@deals/kernel';
import { Pool } from 'pg';
import { schemaOnce } from '../postgres-schema';
import { inTransaction } from '../postgres-transaction';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS snapshots (
  stream_id text NOT NULL,
  shape text NOT NULL,
  revision integer NOT NULL,
  event_id text NOT NULL,
  state jsonb NOT NULL,
  PRIMARY KEY (stream_id, shape)
);
CREATE TABLE IF NOT EXISTS snapshot_entries (
  stream_id text NOT NULL,
  shape text NOT NULL,
  key text NOT NULL,
  revision integer NOT NULL,
  value jsonb NOT NULL,
  PRIMARY KEY (stream_id, shape, key)
);
`;

/**
 * Snapshots in the PostgreSQL database that holds the log (tables `snapshots`, `snapshot_entries`),
 * shared by every replica: whichever saves a later one first, the others load it.
 */
export class PostgresSnapshotStore extends SnapshotStore {
  private readonly pool: Pool;
  private readonly schema: () => Promise<void>;

  constructor(url: string) {
    super();
    this.pool = servicePool(url, 2);
    this.schema = schemaOnce(this.pool, 'snapshot_entries', 7216003, SCHEMA);
  }

  async load(streamId: string, shape: string): Promise<StoredSnapshot | null> {
    await this.schema();
    const { rows } = await this.pool.query<{ revision: number; event_id: string; state: unknown }>(
      'SELECT revision, event_id, state FROM snapshots WHERE stream_id = $1 AND shape = $2',
      [streamId, shape],
    );
    return rows.length ? { revision: rows[0].revision, eventId: rows[0].event_id, state: rows[0].state } : null;
  }

  async save(streamId: string, shape: string, snapshot: StoredSnapshot, entries: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    await this.schema();
    await inTransaction(this.pool, async (client) => {
      await client.query(
        `INSERT INTO snapshots (stream_id, shape, revision, event_id, state) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (stream_id, shape) DO UPDATE SET revision = EXCLUDED.revision, event_id = EXCLUDED.event_id, state = EXCLUDED.state
       WHERE EXCLUDED.revision > snapshots.revision`,
        [streamId, shape, snapshot.revision, snapshot.eventId, JSON.stringify(snapshot.state)],
      );
      if (entries.length)
        await client.query(
          `INSERT INTO snapshot_entries (stream_id, shape, key, revision, value)
         SELECT $1, $2, k, $3, v FROM unnest($4::text[], $5::jsonb[]) AS x(k, v)
         ON CONFLICT (stream_id, shape, key) DO UPDATE SET revision = EXCLUDED.revision
         WHERE EXCLUDED.revision < snapshot_entries.revision`,
          [streamId, shape, snapshot.revision, entries.map(([key]) => key), entries.map(([, value]) => JSON.stringify(value))],
        );
    });
  }

  async lookup(streamId: string, shape: string, keys: readonly string[], atRevision: StreamRevision): Promise<Array<[string, unknown]>> {
    await this.schema();
    const { rows } = await this.pool.query<{ key: string; value: unknown }>(
      'SELECT key, value FROM snapshot_entries WHERE stream_id = $1 AND shape = $2 AND revision <= $3 AND key = ANY($4::text[])',
      [streamId, shape, atRevision, keys],
    );
    return rows.map((row) => [row.key, row.value]);
  }

  async forget(streamId: string): Promise<void> {
    await this.schema();
    // One statement: a save committed meanwhile keeps or loses its snapshot and its entries together.
    await this.pool.query(
      'WITH snapshot AS (DELETE FROM snapshots WHERE stream_id = $1) DELETE FROM snapshot_entries WHERE stream_id = $1',
      [streamId],
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
