/**
 * The event log's writes, run by the write thread inside a group transaction (see
 * {@link SqliteWriteThread}). Loaded by path in the worker: relative imports only.
 */
import type Database from 'better-sqlite3';

export interface AppendArgs {
  streamId: string;
  /**
   * Each event as `[id, type, data JSON, metadata JSON]`: encoded on the caller's thread, since a
   * string crosses to the worker far more cheaply than the objects it encodes.
   */
  events: Array<[string, string, string, string]>;
  /** A revision, 'no_stream' or 'any'. */
  expected: number | 'no_stream' | 'any';
}

export type AppendWritten =
  | { written: true; revision: number; position: number }
  | { written: false; actual: number | null };

export const EVENTS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    stream_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    metadata TEXT NOT NULL,
    UNIQUE (stream_id, revision)
  )`;

export function prepareWrites(db: Database.Database) {
  const insert = db.prepare('INSERT INTO events (id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
  const lastRevision = db.prepare('SELECT MAX(revision) AS revision FROM events WHERE stream_id = ?').pluck();
  return {
    /** Checks the expected revision against the file (or what this batch already wrote), then inserts. */
    append({ streamId, events, expected }: AppendArgs, revisions: Map<string, unknown>): AppendWritten {
      const actual = revisions.has(streamId) ? (revisions.get(streamId) as number | null) : (lastRevision.get(streamId) as number | null);
      const matches = expected === 'any' || (expected === 'no_stream' ? actual === null : actual === expected);
      if (!matches) return { written: false, actual };
      let revision = actual;
      let position = 0;
      for (const [id, type, data, metadata] of events) {
        revision = revision === null ? 0 : revision + 1;
        const info = insert.run(id, streamId, revision, type, data, metadata);
        position = Number(info.lastInsertRowid);
      }
      revisions.set(streamId, revision);
      return { written: true, revision: revision as number, position };
    },
  };
}
