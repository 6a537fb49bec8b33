import { EventSeal, SealRaced, SealStore, SignedCheckpoint } from '@deals/kernel';
import { Client, Pool } from 'pg';
import { servicePool } from '../postgres-pool';
import { schemaOnce } from '../postgres-schema';
import { inTransaction } from '../postgres-transaction';
import { CheckpointRow, SealRow, toCheckpoint, toSeal } from './seal-rows';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_checkpoints (
  number bigint PRIMARY KEY,
  previous text,
  from_position text NOT NULL,
  to_position text NOT NULL,
  count bigint NOT NULL,
  root text NOT NULL,
  sealed_at text NOT NULL,
  signature text NOT NULL
);
CREATE TABLE IF NOT EXISTS event_seals (
  position text PRIMARY KEY,
  stream_id text NOT NULL,
  revision bigint NOT NULL,
  hash text NOT NULL,
  link text NOT NULL,
  checkpoint bigint NOT NULL,
  idx bigint NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE INDEX IF NOT EXISTS event_seals_by_checkpoint ON event_seals (checkpoint, idx);
`;
const SCHEMA_LOCK = 7216007;
/** The advisory lock (shared: several workers may seal) that every process that seals holds while it runs. */
const SEALERS_LOCK: [number, number] = [7216008, 1];
const UNIQUE_VIOLATION = '23505';

/**
 * The seals and signed checkpoints in the PostgreSQL database that holds the log (tables
 * `audit_checkpoints` and `event_seals`); a checkpoint and its seals in one transaction, whose
 * number's key refuses a second sealer's. A process that seals holds a shared session-level advisory
 * lock, on a connection of its own, while it runs: PostgreSQL drops it with the session when the
 * process dies, so whoever asks sees only live sealers (of this database).
 */
export class PostgresSealStore extends SealStore {
  private readonly pool: Pool;
  private readonly schema: () => Promise<void>;
  private sealerClient: Client | null = null;

  constructor(private readonly url: string) {
    super();
    this.pool = servicePool(url, 2);
    this.schema = schemaOnce(this.pool, 'event_seals', SCHEMA_LOCK, SCHEMA);
  }

  async lastCheckpoint(): Promise<SignedCheckpoint | null> {
    await this.schema();
    const { rows } = await this.pool.query<CheckpointRow>('SELECT * FROM audit_checkpoints ORDER BY number DESC LIMIT 1');
    return rows[0] ? toCheckpoint(rows[0]) : null;
  }

  async streamLinks(streamIds: readonly string[]): Promise<Map<string, { revision: number; link: string }>> {
    await this.schema();
    const { rows } = await this.pool.query<SealRow>(
      `SELECT DISTINCT ON (stream_id) * FROM event_seals WHERE stream_id = ANY($1::text[]) ORDER BY stream_id, revision DESC`,
      [streamIds],
    );
    return new Map(rows.map((row) => [row.stream_id, { revision: Number(row.revision), link: row.link }]));
  }

  async write(checkpoint: SignedCheckpoint, seals: readonly EventSeal[]): Promise<void> {
    await this.schema();
    try {
      await inTransaction(this.pool, async (client) => {
        const c = checkpoint;
        await client.query(
          `INSERT INTO audit_checkpoints (number, previous, from_position, to_position, count, root, sealed_at, signature)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [c.number, c.previous, c.fromPosition, c.toPosition, c.count, c.root, c.sealedAt, c.signature],
        );
        await client.query(
          `INSERT INTO event_seals (position, stream_id, revision, hash, link, checkpoint, idx)
           SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::bigint[])`,
          [
            seals.map((s) => s.position),
            seals.map((s) => s.streamId),
            seals.map((s) => s.revision),
            seals.map((s) => s.hash),
            seals.map((s) => s.link),
            seals.map((s) => s.checkpoint),
            seals.map((s) => s.index),
          ],
        );
      });
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new SealRaced(checkpoint.number);
      throw error;
    }
  }

  async checkpoints(from: number, limit: number): Promise<SignedCheckpoint[]> {
    await this.schema();
    const { rows } = await this.pool.query<CheckpointRow>('SELECT * FROM audit_checkpoints WHERE number >= $1 ORDER BY number LIMIT $2', [
      from,
      limit,
    ]);
    return rows.map(toCheckpoint);
  }

  async sealsOf(checkpoint: number): Promise<EventSeal[]> {
    await this.schema();
    const { rows } = await this.pool.query<SealRow>('SELECT * FROM event_seals WHERE checkpoint = $1 ORDER BY idx', [checkpoint]);
    return rows.map(toSeal);
  }

  async sealOf(streamId: string, revision: number): Promise<EventSeal | null> {
    await this.schema();
    const { rows } = await this.pool.query<SealRow>('SELECT * FROM event_seals WHERE stream_id = $1 AND revision = $2', [
      streamId,
      revision,
    ]);
    return rows[0] ? toSeal(rows[0]) : null;
  }

  async sealsOfStream(streamId: string): Promise<EventSeal[]> {
    await this.schema();
    const { rows } = await this.pool.query<SealRow>('SELECT * FROM event_seals WHERE stream_id = $1 ORDER BY revision', [streamId]);
    return rows.map(toSeal);
  }

  async declareSealer(): Promise<void> {
    if (this.sealerClient) return;
    const client = new Client({ connectionString: this.url, keepAlive: true });
    client.on('error', () => undefined);
    client.on('end', () => {
      if (this.sealerClient === client) this.sealerClient = null;
    });
    await client.connect();
    try {
      await client.query('SELECT pg_advisory_lock_shared($1, $2)', SEALERS_LOCK);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.sealerClient = client;
  }

  async sealerRunning(): Promise<boolean> {
    const { rows } = await this.pool.query<{ running: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND classid = $1::int::oid AND objid = $2::int::oid) AS running`,
      SEALERS_LOCK,
    );
    return rows[0].running;
  }

  async close(): Promise<void> {
    const client = this.sealerClient;
    this.sealerClient = null;
    await client?.end().catch(() => undefined);
    await this.pool.end();
  }
}
