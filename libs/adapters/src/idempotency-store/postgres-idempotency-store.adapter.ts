import { ClaimOutcome, IdempotencyClaim, IdempotencyStore, RecordedAnswer } from '@deals/kernel';
import { randomInt } from 'node:crypto';
import { Client, Pool } from 'pg';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS idempotency_keys (
  key_id text PRIMARY KEY,
  fingerprint text NOT NULL,
  owner integer NOT NULL,
  started_at bigint NOT NULL,
  run_id text NOT NULL,
  status integer,
  content_type text,
  body bytea,
  expires_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_keys_by_expiry ON idempotency_keys (expires_at);
`;

/** The first key of the advisory locks that say which processes are alive (the second is the process's owner number). */
const OWNERS_LOCK_SPACE = 7216004;
const SCHEMA_LOCK = 7216005;

interface Row {
  fingerprint: string;
  owner: number;
  started_at: string;
  run_id: string;
  status: number | null;
  content_type: string | null;
  body: Buffer | null;
}

/**
 * Idempotency keys in the PostgreSQL database that holds the log (table `idempotency_keys`), shared
 * by every replica. A claim inserts the key's row, or finds it. Each process holds a session-level
 * advisory lock on its owner number for as long as it lives, on a connection of its own: a running
 * row whose owner holds no such lock was left by a process that died (PostgreSQL ends the session
 * and its locks when the connection drops), and the next claim of its key takes it over.
 */
export class PostgresIdempotencyStore extends IdempotencyStore {
  private readonly pool: Pool;
  private owner = 0;
  private lockClient: Client | null = null;
  private ready: Promise<void> | null = null;

  constructor(private readonly url: string) {
    super();
    this.pool = new Pool({ connectionString: url, max: 4 });
    this.pool.on('error', () => undefined);
  }

  /** Makes the table once, and holds this process's owner lock (again, after its connection was lost). */
  private start(): Promise<void> {
    this.ready ??= (async () => {
      const { rows } = await this.pool.query<{ made: boolean }>(`SELECT to_regclass('idempotency_keys') IS NOT NULL AS made`);
      if (!rows[0].made) await this.pool.query(`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK}); ${SCHEMA}`);
      const client = new Client({ connectionString: this.url, keepAlive: true });
      client.on('error', () => undefined);
      client.on('end', () => {
        if (this.lockClient === client) {
          this.lockClient = null;
          this.ready = null;
        }
      });
      await client.connect();
      try {
        // The same owner number again after a lost connection (its claims in flight stay its own);
        // a new one no live process holds at first (a dead one's is free again: its rows are taken over).
        for (;;) {
          const owner = this.owner || randomInt(1, 2 ** 31 - 1);
          const { rows: got } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', [
            OWNERS_LOCK_SPACE,
            owner,
          ]);
          if (got[0].locked) {
            this.owner = owner;
            break;
          }
          if (this.owner) throw new Error(`owner ${owner}'s lock is held by another session: this process's claims were taken over`);
        }
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      }
      this.lockClient = client;
    })().catch((error) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  async claim({ keyId, fingerprint, now, expiresAt, runId }: IdempotencyClaim): Promise<ClaimOutcome> {
    await this.start();
    for (;;) {
      // New, or forgotten (expired and not yet purged): this process's now.
      const inserted = await this.pool.query(
        `INSERT INTO idempotency_keys (key_id, fingerprint, owner, started_at, run_id, expires_at) VALUES ($1, $2, $3, $5, $6, $4)
         ON CONFLICT (key_id) DO UPDATE SET fingerprint = excluded.fingerprint, owner = excluded.owner, started_at = excluded.started_at, run_id = excluded.run_id,
           status = NULL, content_type = NULL, body = NULL, expires_at = excluded.expires_at
         WHERE idempotency_keys.expires_at <= $5
         RETURNING 1`,
        [keyId, fingerprint, this.owner, expiresAt, now, runId],
      );
      if (inserted.rowCount === 1) return { kind: 'new', startedAt: now, runId };
      const { rows } = await this.pool.query<Row>(
        'SELECT fingerprint, owner, started_at, run_id, status, content_type, body FROM idempotency_keys WHERE key_id = $1',
        [keyId],
      );
      const row = rows[0];
      if (!row) continue; // purged meanwhile
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (row.status !== null) return { kind: 'answered', answer: { status: row.status, contentType: row.content_type!, body: row.body! } };
      if (row.owner === this.owner || (await this.ownerAlive(row.owner))) return { kind: 'running' };
      const taken = await this.pool.query(
        'UPDATE idempotency_keys SET owner = $2 WHERE key_id = $1 AND owner = $3 AND status IS NULL RETURNING 1',
        [keyId, this.owner, row.owner],
      );
      if (taken.rowCount === 1) return { kind: 'resumed', startedAt: Number(row.started_at), runId: row.run_id };
    }
  }

  private async ownerAlive(owner: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ alive: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::int::oid AND objid = $2::int::oid
         AND objsubid = 2 AND granted) AS alive`,
      [OWNERS_LOCK_SPACE, owner],
    );
    return rows[0].alive;
  }

  async answer(keyId: string, { status, contentType, body }: RecordedAnswer): Promise<void> {
    const { rowCount } = await this.pool.query(
      'UPDATE idempotency_keys SET status = $2, content_type = $3, body = $4 WHERE key_id = $1 AND owner = $5 AND status IS NULL',
      [keyId, status, contentType, body, this.owner],
    );
    if (rowCount !== 1) throw new Error(`the claim of idempotency key ${keyId} is no longer this process's: its answer is not kept`);
  }

  /** Owner 0 is no process's: the next claim takes the run over (resumed). */
  async release(keyId: string): Promise<void> {
    await this.pool.query('UPDATE idempotency_keys SET owner = 0 WHERE key_id = $1 AND owner = $2 AND status IS NULL', [keyId, this.owner]);
  }

  async purge(now: number): Promise<number> {
    if (!this.ready) return 0; // nothing claimed by this process yet: the table may not even exist
    await this.ready;
    const { rowCount } = await this.pool.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now]);
    return rowCount ?? 0;
  }

  async close(): Promise<void> {
    const client = this.lockClient;
    this.lockClient = null;
    await client?.end().catch(() => undefined);
    await this.pool.end();
  }
}
