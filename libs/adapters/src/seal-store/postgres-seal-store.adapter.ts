import { EventSeal, RecentMap, SealRaced, SealStore, SignedCheckpoint } from '@deals/kernel';
import { Client, Pool } from 'pg';
import { servicePool } from '../postgres-pool';
import { schemaOnce } from '../postgres-schema';
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
CREATE TABLE IF NOT EXISTS audit_checkpoint_seals (
  checkpoint bigint PRIMARY KEY,
  seals text NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_stream_seals (
  stream_id text NOT NULL,
  from_revision bigint NOT NULL,
  to_revision bigint NOT NULL,
  link text NOT NULL,
  checkpoint bigint NOT NULL,
  PRIMARY KEY (stream_id, from_revision)
);
`;
const SCHEMA_LOCK = 7216007;
/** The advisory lock (shared: several workers may seal) that every process that seals holds while it runs. */
const SEALERS_LOCK: [number, number] = [7216008, 1];
const UNIQUE_VIOLATION = '23505';
/** Checkpoints' unpacked seals kept, at most (up to 4,096 seals each). */
const UNPACKED_KEPT = 8;

/** A checkpoint's seals as one row keeps them, in their order: `[position, stream, revision, hash, link]` each. */
type PackedSeal = [string, string, number, string, string];

const pack = (seals: readonly EventSeal[]): string =>
  JSON.stringify(seals.map((s): PackedSeal => [s.position, s.streamId, s.revision, s.hash, s.link]));

const unpack = (checkpoint: number, seals: string): EventSeal[] =>
  (JSON.parse(seals) as PackedSeal[]).map(([position, streamId, revision, hash, link], index) => ({
    position,
    streamId,
    revision,
    hash,
    link,
    checkpoint,
    index,
  }));

/**
 * The seals and signed checkpoints in the PostgreSQL database that holds the log. A checkpoint
 * (`audit_checkpoints`) and its seals are written in one statement, whose number's key refuses a
 * second sealer's: its seals packed in one row (`audit_checkpoint_seals`), and for each stream it
 * seals one row (`audit_stream_seals`: the revisions it holds of that stream and the last one's
 * link), through which a stream's seals and newest link are found; a row and three index entries
 * an event cost four times the log's own write. Seals written one row an event before
 * (`event_seals`) are still read. A process that seals holds a shared session-level advisory lock,
 * on a connection of its own, while it runs: PostgreSQL drops it with the session when the process
 * dies, so whoever asks sees only live sealers (of this database).
 */
export class PostgresSealStore extends SealStore {
  private readonly pool: Pool;
  private readonly schema: () => Promise<void>;
  private sealerClient: Client | null = null;
  /** Checkpoints' seals last unpacked (a verification from the middle of the log reads the same few again and again). */
  private readonly unpacked = new RecentMap<number, EventSeal[]>(UNPACKED_KEPT);

  constructor(private readonly url: string) {
    super();
    this.pool = servicePool(url, 2);
    this.schema = schemaOnce(this.pool, 'audit_stream_seals', SCHEMA_LOCK, SCHEMA);
  }

  async lastCheckpoint(): Promise<SignedCheckpoint | null> {
    await this.schema();
    const { rows } = await this.pool.query<CheckpointRow>('SELECT * FROM audit_checkpoints ORDER BY number DESC LIMIT 1');
    return rows[0] ? toCheckpoint(rows[0]) : null;
  }

  async streamLinks(streamIds: readonly string[]): Promise<Map<string, { revision: number; link: string }>> {
    await this.schema();
    // A stream's packed seals come after its seals of one row an event, if it has both.
    const { rows } = await this.pool.query<{ stream_id: string; revision: string; link: string }>(
      `SELECT DISTINCT ON (stream_id) stream_id, revision, link FROM (
         SELECT stream_id, to_revision AS revision, link FROM audit_stream_seals WHERE stream_id = ANY($1::text[])
         UNION ALL
         SELECT stream_id, revision, link FROM event_seals WHERE stream_id = ANY($1::text[])) AS heads
       ORDER BY stream_id, revision DESC`,
      [streamIds],
    );
    return new Map(rows.map((row) => [row.stream_id, { revision: Number(row.revision), link: row.link }]));
  }

  async write(checkpoint: SignedCheckpoint, seals: readonly EventSeal[]): Promise<void> {
    await this.schema();
    try {
      // Each stream's revisions in this checkpoint, and its last one's link.
      const streams = new Map<string, { from: number; to: number; link: string }>();
      for (const { streamId, revision, link } of seals) {
        const seen = streams.get(streamId);
        if (!seen) streams.set(streamId, { from: revision, to: revision, link });
        else if (revision > seen.to) Object.assign(seen, { to: revision, link });
        else if (revision < seen.from) seen.from = revision;
      }
      const c = checkpoint;
      await this.pool.query(
        `WITH c AS (
           INSERT INTO audit_checkpoints (number, previous, from_position, to_position, count, root, sealed_at, signature)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)),
         s AS (INSERT INTO audit_checkpoint_seals (checkpoint, seals) VALUES ($1, $9))
         INSERT INTO audit_stream_seals (stream_id, from_revision, to_revision, link, checkpoint)
           SELECT r.*, $1 FROM unnest($10::text[], $11::bigint[], $12::bigint[], $13::text[]) AS r`,
        [
          c.number,
          c.previous,
          c.fromPosition,
          c.toPosition,
          c.count,
          c.root,
          c.sealedAt,
          c.signature,
          pack(seals),
          [...streams.keys()],
          [...streams.values()].map((r) => r.from),
          [...streams.values()].map((r) => r.to),
          [...streams.values()].map((r) => r.link),
        ],
      );
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
    const packed = (await this.packedSeals([checkpoint])).get(checkpoint);
    if (packed) return [...packed];
    const { rows } = await this.pool.query<SealRow>('SELECT * FROM event_seals WHERE checkpoint = $1 ORDER BY idx', [checkpoint]);
    return rows.map(toSeal);
  }

  async sealOf(streamId: string, revision: number): Promise<EventSeal | null> {
    return (await this.sealsOfStream(streamId, revision)).find((seal) => seal.revision === revision) ?? null;
  }

  /** A stream's seals in order; with `revision`, only those of the checkpoint that holds it. */
  async sealsOfStream(streamId: string, revision?: number): Promise<EventSeal[]> {
    await this.schema();
    const at = revision ?? null;
    const [legacy, holding] = await Promise.all([
      this.pool.query<SealRow>(
        'SELECT * FROM event_seals WHERE stream_id = $1 AND ($2::bigint IS NULL OR revision = $2) ORDER BY revision',
        [streamId, at],
      ),
      this.pool.query<{ checkpoint: string }>(
        `SELECT checkpoint FROM audit_stream_seals
          WHERE stream_id = $1 AND ($2::bigint IS NULL OR $2 BETWEEN from_revision AND to_revision) ORDER BY from_revision`,
        [streamId, at],
      ),
    ]);
    const checkpoints = holding.rows.map((row) => Number(row.checkpoint));
    const packed = await this.packedSeals(checkpoints);
    return [
      ...legacy.rows.map(toSeal),
      ...checkpoints.flatMap((checkpoint) => (packed.get(checkpoint) ?? []).filter((seal) => seal.streamId === streamId)),
    ];
  }

  /** The packed seals of these checkpoints (those that have them), read once and kept a while: a checkpoint never changes. */
  private async packedSeals(checkpoints: readonly number[]): Promise<Map<number, EventSeal[]>> {
    const found = new Map<number, EventSeal[]>();
    const missing: number[] = [];
    for (const checkpoint of checkpoints) {
      const known = this.unpacked.get(checkpoint);
      if (known) found.set(checkpoint, known);
      else missing.push(checkpoint);
    }
    if (missing.length) {
      const { rows } = await this.pool.query<{ checkpoint: string; seals: string }>(
        'SELECT checkpoint, seals FROM audit_checkpoint_seals WHERE checkpoint = ANY($1::bigint[])',
        [missing],
      );
      for (const row of rows) {
        const seals = unpack(Number(row.checkpoint), row.seals);
        this.unpacked.set(Number(row.checkpoint), seals);
        found.set(Number(row.checkpoint), seals);
      }
    }
    return found;
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
