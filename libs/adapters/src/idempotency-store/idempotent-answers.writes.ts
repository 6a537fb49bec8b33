/** The embedded idempotency store's statements, run in its group transactions on the event loop. */
import { CLOCK_SEPARATOR, KEPT_ROW_BYTES } from '@deals/kernel';
import type Database from 'better-sqlite3';

/** A key's row: claimed (`status` null) or answered; `size` is what it takes up, counted for its partner. */
export const KEYS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS idempotency_keys (
    key_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, started_at INTEGER NOT NULL, run_id TEXT NOT NULL, expires_at INTEGER NOT NULL,
    status INTEGER, content_type TEXT, body BLOB, partner TEXT NOT NULL DEFAULT '', size INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX IF NOT EXISTS idempotency_keys_by_expiry ON idempotency_keys (expires_at);
`;

/** Bytes to add to (or, negative, take from) partners' counts. */
export type SizeChanges = Map<string, number>;

/** Where the statements note their changes of size: the store points it at one request's changes, and counts them once committed. */
export interface SizeLedger {
  current: SizeChanges;
}

export const addSize = (changes: SizeChanges, partner: string, bytes: number) => changes.set(partner, (changes.get(partner) ?? 0) + bytes);

/** A file of a version before the partners' counts: its rows get their partner ('' : not known) and size. */
function addSizeColumns(db: Database.Database): void {
  const columns = new Set((db.pragma('table_info(idempotency_keys)') as Array<{ name: string }>).map((c) => c.name));
  if (columns.has('size')) return;
  db.transaction(() => {
    db.exec(`ALTER TABLE idempotency_keys ADD COLUMN partner TEXT NOT NULL DEFAULT ''`);
    db.exec(`ALTER TABLE idempotency_keys ADD COLUMN size INTEGER NOT NULL DEFAULT 0`);
    db.exec(`UPDATE idempotency_keys SET size = ${KEPT_ROW_BYTES} + coalesce(length(body), 0)`);
  })();
}

export interface ClaimArgs {
  keyId: string;
  partnerId: string;
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

export function prepareWrites(db: Database.Database, ledger: SizeLedger) {
  db.exec(KEYS_SCHEMA);
  addSizeColumns(db);
  const find = db.prepare(
    'SELECT fingerprint, started_at, run_id, status, content_type, body FROM idempotency_keys WHERE key_id = ? AND expires_at > ?',
  );
  const forgotten = db.prepare<[string, number], { partner: string; size: number }>(
    'SELECT partner, size FROM idempotency_keys WHERE key_id = ? AND expires_at <= ?',
  );
  // A key forgotten but not yet purged is taken by its new claim; a live one is left as it is.
  const claim = db.prepare(
    `INSERT INTO idempotency_keys (key_id, fingerprint, started_at, run_id, expires_at, partner, size) VALUES (?, ?, ?, ?, ?, ?, ${KEPT_ROW_BYTES})
     ON CONFLICT (key_id) DO UPDATE SET fingerprint = excluded.fingerprint, started_at = excluded.started_at, run_id = excluded.run_id,
       expires_at = excluded.expires_at, status = NULL, content_type = NULL, body = NULL, partner = excluded.partner, size = excluded.size
     WHERE idempotency_keys.expires_at <= excluded.started_at`,
  );
  const answer = db.prepare<[number, string, Buffer, number, string]>(
    'UPDATE idempotency_keys SET status = ?, content_type = ?, body = ?, size = size + ? WHERE key_id = ? AND status IS NULL RETURNING partner',
  );
  // Real time's purge leaves test clocks' worlds alone; a world's own is purged by its clock's time.
  const realTime = `instr(partner, '${CLOCK_SEPARATOR}') = 0`;
  const expiredSizes = db.prepare<[number], { partner: string; size: number }>(
    `SELECT partner, SUM(size) AS size FROM idempotency_keys WHERE expires_at <= ? AND ${realTime} GROUP BY partner`,
  );
  const purge = db.prepare(`DELETE FROM idempotency_keys WHERE expires_at <= ? AND ${realTime}`);
  const expiredWorldSize = db.prepare<[number, string], { size: number | null }>(
    'SELECT SUM(size) AS size FROM idempotency_keys WHERE expires_at <= ? AND partner = ?',
  );
  const purgeWorld = db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ? AND partner = ?');
  const live = db.prepare<[string, number], { found: number }>(
    'SELECT 1 AS found FROM idempotency_keys WHERE key_id = ? AND expires_at > ?',
  );
  const allSizes = db.prepare<[], { partner: string; size: number }>(
    'SELECT partner, SUM(size) AS size FROM idempotency_keys GROUP BY partner',
  );
  return {
    /** What every partner's kept keys take up, as the file says (read once, as the store opens). */
    sizes(): SizeChanges {
      return new Map(allSizes.all().map((row) => [row.partner, row.size]));
    },
    /** Whether the key has a live row (a read: run outside the group transactions). */
    holds(keyId: string, now: number): boolean {
      return live.get(keyId, now) !== undefined;
    },
    /** The key's live row if it has one (nothing written), else null once it is claimed for this run. */
    claim({ keyId, partnerId, fingerprint, startedAt, runId, expiresAt }: ClaimArgs): KeyRow | null {
      const replaced = forgotten.get(keyId, startedAt);
      if (claim.run(keyId, fingerprint, startedAt, runId, expiresAt, partnerId).changes === 1) {
        if (replaced) addSize(ledger.current, replaced.partner, -replaced.size);
        addSize(ledger.current, partnerId, KEPT_ROW_BYTES);
        return null;
      }
      return find.get(keyId, startedAt) as KeyRow;
    },
    answer({ keyId, status, contentType, body }: AnswerArgs): null {
      const kept = answer.get(status, contentType, Buffer.from(body.buffer, body.byteOffset, body.byteLength), body.byteLength, keyId) as
        { partner: string } | undefined;
      if (kept) addSize(ledger.current, kept.partner, body.byteLength);
      return null;
    },
    purge({ now, world }: { now: number; world?: string }): number {
      if (world !== undefined) {
        addSize(ledger.current, world, -(expiredWorldSize.get(now, world)?.size ?? 0));
        return purgeWorld.run(now, world).changes;
      }
      for (const { partner, size } of expiredSizes.all(now)) addSize(ledger.current, partner, -size);
      return purge.run(now).changes;
    },
  };
}
