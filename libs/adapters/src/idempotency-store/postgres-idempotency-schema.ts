import { KEPT_ROW_BYTES } from '@deals/kernel';

export const SCHEMA = `
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
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS partner text NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS size integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS claim_token text;
CREATE TABLE IF NOT EXISTS idempotency_usage (partner text PRIMARY KEY, bytes bigint NOT NULL);
`;
/** True once {@link SCHEMA} has been applied whole (its last column there). */
export const SCHEMA_MADE = `SELECT EXISTS (SELECT 1 FROM information_schema.columns
  WHERE table_schema = current_schema() AND table_name = 'idempotency_keys' AND column_name = 'claim_token') AS made`;

/** The first key of the advisory locks that say which processes are alive (the second is the process's owner number). */
export const OWNERS_LOCK_SPACE = 7216004;
export const SCHEMA_LOCK = 7216005;

/**
 * A claim in one statement: the key inserted, or taken when forgotten (expired, not yet purged); else
 * its live row as this statement found it, and whether its owner, another process, holds its lock
 * (alive). No row: the key changed under this statement (claimed or purged elsewhere meanwhile).
 * The row is read from the statement's snapshot, the insert waits for a claim under way elsewhere:
 * a finished key is found finished by every claim at once.
 */
export const CLAIM = `
WITH claimed AS (
  INSERT INTO idempotency_keys (key_id, fingerprint, owner, started_at, run_id, expires_at, partner, size, claim_token)
  VALUES ($1, $2, $3, $5, $6, $4, $7, ${KEPT_ROW_BYTES}, $8)
  ON CONFLICT (key_id) DO UPDATE SET fingerprint = excluded.fingerprint, owner = excluded.owner, started_at = excluded.started_at,
    run_id = excluded.run_id, status = NULL, content_type = NULL, body = NULL, expires_at = excluded.expires_at,
    partner = excluded.partner, size = excluded.size, claim_token = excluded.claim_token
  WHERE idempotency_keys.expires_at <= $5
  RETURNING 1)
SELECT true AS claimed, NULL AS fingerprint, NULL AS owner, NULL AS started_at, NULL AS run_id, NULL AS status,
  NULL AS content_type, NULL AS body, false AS alive
FROM claimed
UNION ALL
SELECT false, k.fingerprint, k.owner, k.started_at, k.run_id, k.status, k.content_type, k.body,
  CASE WHEN k.status IS NULL AND k.owner <> 0 AND k.owner <> $3 THEN EXISTS (SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.classid = ${OWNERS_LOCK_SPACE}::oid AND l.objid = k.owner::oid AND l.objsubid = 2 AND l.granted)
  ELSE false END
FROM idempotency_keys k
WHERE k.key_id = $1 AND k.expires_at > $5 AND NOT EXISTS (SELECT 1 FROM claimed)`;

export interface Row {
  fingerprint: string;
  owner: number;
  started_at: string;
  run_id: string;
  status: number | null;
  content_type: string | null;
  body: Buffer | null;
}
