/**
 * The embedded seal store's tables and statements, shared by the store and the sealing thread
 * (which loads this by path: relative imports only, and types, which compile away).
 */
import type Database from 'better-sqlite3';
import type { EventSeal, SignedCheckpoint } from '@deals/kernel';
import type { CheckpointRow, SealRow } from './seal-rows';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS checkpoints (
    number INTEGER PRIMARY KEY, previous TEXT, from_position TEXT NOT NULL, to_position TEXT NOT NULL,
    count INTEGER NOT NULL, root TEXT NOT NULL, sealed_at TEXT NOT NULL, signature TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS event_seals (
    position TEXT PRIMARY KEY, stream_id TEXT NOT NULL, revision INTEGER NOT NULL, hash TEXT NOT NULL,
    link TEXT NOT NULL, checkpoint INTEGER NOT NULL, idx INTEGER NOT NULL, UNIQUE (stream_id, revision)) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS event_seals_by_checkpoint ON event_seals (checkpoint, idx);
`;

export function prepareSealStatements(db: Database.Database) {
  db.exec(SCHEMA);
  const insertCheckpoint = db.prepare(
    `INSERT INTO checkpoints (number, previous, from_position, to_position, count, root, sealed_at, signature)
     VALUES (@number, @previous, @fromPosition, @toPosition, @count, @root, @sealedAt, @signature) ON CONFLICT DO NOTHING`,
  );
  const insertSeal = db.prepare(
    'INSERT INTO event_seals (position, stream_id, revision, hash, link, checkpoint, idx) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  return {
    last: db.prepare<[], CheckpointRow>('SELECT * FROM checkpoints ORDER BY number DESC LIMIT 1'),
    streamLink: db.prepare<[string], SealRow>('SELECT * FROM event_seals WHERE stream_id = ? ORDER BY revision DESC LIMIT 1'),
    checkpoints: db.prepare<[number, number], CheckpointRow>('SELECT * FROM checkpoints WHERE number >= ? ORDER BY number LIMIT ?'),
    sealsOf: db.prepare<[number], SealRow>('SELECT * FROM event_seals WHERE checkpoint = ? ORDER BY idx'),
    sealOf: db.prepare<[string, number], SealRow>('SELECT * FROM event_seals WHERE stream_id = ? AND revision = ?'),
    sealsOfStream: db.prepare<[string], SealRow>('SELECT * FROM event_seals WHERE stream_id = ? ORDER BY revision'),
    /** Writes a checkpoint and its seals in one transaction; false (nothing written) when its number is taken. */
    write: db.transaction((checkpoint: SignedCheckpoint, seals: readonly EventSeal[]): boolean => {
      const { number, previous, fromPosition, toPosition, count, root, sealedAt, signature } = checkpoint;
      if (insertCheckpoint.run({ number, previous, fromPosition, toPosition, count, root, sealedAt, signature }).changes === 0)
        return false;
      for (const s of seals) insertSeal.run(s.position, s.streamId, s.revision, s.hash, s.link, s.checkpoint, s.index);
      return true;
    }),
  };
}
