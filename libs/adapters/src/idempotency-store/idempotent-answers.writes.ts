/**
 * The embedded idempotency store's writes, run by its write thread (see {@link SqliteWriteThread})
 * in group transactions. Loaded by path in the worker: relative imports only.
 */
import type Database from 'better-sqlite3';

/** A key's row: claimed (`status` null) or answered. */
export const KEYS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS idempotency_keys (
    key_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, started_at INTEGER NOT NULL, run_id TEXT NOT NULL, expires_at INTEGER NOT NULL,
    status INTEGER, content_type TEXT, body BLOB);
  CREATE INDEX IF NOT EXISTS idempotency_keys_by_expiry ON idempotency_keys (expires_at);
`;

export interface ClaimArgs {
  keyId: string;
  fingerprint: string;
  startedAt: number;
  runId: string;
  expiresAt: number;
}

/** A key's row as a claim found it (a live one: not expired). */
export interface KeyRow {
  fingerprint: string;
  started_at: number;
  run_id: string;
  status: number | null;
  content_type: string | null;
  body: Uint8Array | null;
}

export interface AnswerArgs {
  keyId: string;
  status: number;
  contentType: string;
  body: Uint8Array;
}

export function prepareWrites(db: Database.Database) {
  db.exec(KEYS_SCHEMA);
  const find = db.prepare(
    'SELECT fingerprint, started_at, run_id, status, content_type, body FROM idempotency_keys WHERE key_id = ? AND expires_at > ?',
  );
  // A key forgotten but not yet purged is taken by its new claim; a live one is left as it is.
  const claim = db.prepare(
    `INSERT INTO idempotency_keys (key_id, fingerprint, started_at, run_id, expires_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (key_id) DO UPDATE SET fingerprint = excluded.fingerprint, started_at = excluded.started_at, run_id = excluded.run_id,
       expires_at = excluded.expires_at, status = NULL, content_type = NULL, body = NULL
     WHERE idempotency_keys.expires_at <= excluded.started_at`,
  );
  const answer = db.prepare('UPDATE idempotency_keys SET status = ?, content_type = ?, body = ? WHERE key_id = ? AND status IS NULL');
  const purge = db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?');
  return {
    /** The key's live row if it has one (nothing written), else null once it is claimed for this run. */
    claim({ keyId, fingerprint, startedAt, runId, expiresAt }: ClaimArgs): KeyRow | null {
      if (claim.run(keyId, fingerprint, startedAt, runId, expiresAt).changes === 1) return null;
      return find.get(keyId, startedAt) as KeyRow;
    },
    answer({ keyId, status, contentType, body }: AnswerArgs): null {
      answer.run(status, contentType, Buffer.from(body.buffer, body.byteOffset, body.byteLength), keyId);
      return null;
    },
    purge({ now }: { now: number }): number {
      return purge.run(now).changes;
    },
  };
}
