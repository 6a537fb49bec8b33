import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** Milliseconds a write waits for another process's lock. The wait blocks the event loop: keep it short. */
const BUSY_TIMEOUT_MS = 2000;

/**
 * Opens a SQLite file in WAL mode with synchronous=FULL, checked on every open: a connection that
 * reopens an existing WAL database silently falls back to NORMAL and can lose commits on a crash.
 */
export function openDurableDatabase(file: string, durability: 'full' | 'normal' = 'full'): Database.Database {
  // A new data folder is the service's own: it holds emails and card metadata (0700, as secrets/ is).
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  db.pragma('journal_mode = WAL');
  if (durability === 'full') {
    db.pragma('synchronous = FULL');
    const level = db.pragma('synchronous', { simple: true });
    if (level !== 2) throw new Error(`${file}: synchronous is ${level}, expected FULL (2)`);
  } else {
    db.pragma('synchronous = NORMAL');
  }
  return db;
}

/** Checkpoints `db`'s WAL and truncates it to nothing; false when another connection kept it busy. */
export function truncateWal(db: Database.Database): boolean {
  const [{ busy }] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
  return busy === 0;
}
