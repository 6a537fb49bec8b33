/**
 * The embedded idempotency store's writes, run by its write thread (see {@link SqliteWriteThread})
 * in group transactions. Loaded by path in the worker: relative imports only.
 */
import type Database from 'better-sqlite3';

export const ANSWERS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS idempotent_answers (
    key_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status INTEGER NOT NULL,
    content_type TEXT NOT NULL, body BLOB NOT NULL, expires_at INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS idempotent_answers_by_expiry ON idempotent_answers (expires_at);
`;

export interface AnswerArgs {
  keyId: string;
  fingerprint: string;
  status: number;
  contentType: string;
  body: Uint8Array;
  expiresAt: number;
}

export function prepareWrites(db: Database.Database) {
  db.exec(ANSWERS_SCHEMA);
  // A key forgotten but not yet purged is replaced by its new use.
  const keep = db.prepare(
    'INSERT OR REPLACE INTO idempotent_answers (key_id, fingerprint, status, content_type, body, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const purge = db.prepare('DELETE FROM idempotent_answers WHERE expires_at <= ?');
  return {
    answer({ keyId, fingerprint, status, contentType, body, expiresAt }: AnswerArgs): null {
      keep.run(keyId, fingerprint, status, contentType, Buffer.from(body.buffer, body.byteOffset, body.byteLength), expiresAt);
      return null;
    },
    purge({ now }: { now: number }): number {
      return purge.run(now).changes;
    },
  };
}
