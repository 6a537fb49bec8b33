import { EventSeal, SealRaced, SealStore, SignedCheckpoint } from '@deals/kernel';
import Database from 'better-sqlite3';
import { openDurableDatabase } from '../sqlite/open-durable-database';
import { CheckpointRow, SealRow, toCheckpoint, toSeal } from './seal-rows';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS checkpoints (
    number INTEGER PRIMARY KEY, previous TEXT, from_position TEXT NOT NULL, to_position TEXT NOT NULL,
    count INTEGER NOT NULL, root TEXT NOT NULL, sealed_at TEXT NOT NULL, signature TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS event_seals (
    position TEXT PRIMARY KEY, stream_id TEXT NOT NULL, revision INTEGER NOT NULL, hash TEXT NOT NULL,
    link TEXT NOT NULL, checkpoint INTEGER NOT NULL, idx INTEGER NOT NULL, UNIQUE (stream_id, revision)) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS event_seals_by_checkpoint ON event_seals (checkpoint, idx);
`;

function prepare(db: Database.Database) {
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
    write: db.transaction((checkpoint: SignedCheckpoint, seals: readonly EventSeal[]) => {
      if (insertCheckpoint.run(checkpoint).changes === 0) throw new SealRaced(checkpoint.number);
      for (const s of seals) insertSeal.run(s.position, s.streamId, s.revision, s.hash, s.link, s.checkpoint, s.index);
    }),
  };
}

/**
 * The embedded seal store: a file of the data folder (`seals.sqlite`) beside the log's, written by
 * the one process that keeps the views (a checkpoint and its seals in one transaction).
 */
export class SqliteSealStore extends SealStore {
  private programs: ReturnType<typeof prepare> | null = null;
  private db: Database.Database | null = null;

  constructor(private readonly file: string) {
    super();
  }

  /** Opened on first use. */
  private open(): ReturnType<typeof prepare> {
    if (this.programs === null) {
      this.db = openDurableDatabase(this.file);
      this.programs = prepare(this.db);
    }
    return this.programs;
  }

  async lastCheckpoint(): Promise<SignedCheckpoint | null> {
    const row = this.open().last.get();
    return row ? toCheckpoint(row) : null;
  }

  async streamLinks(streamIds: readonly string[]): Promise<Map<string, { revision: number; link: string }>> {
    const links = new Map<string, { revision: number; link: string }>();
    const { streamLink } = this.open();
    for (const streamId of streamIds) {
      const row = streamLink.get(streamId);
      if (row) links.set(streamId, { revision: Number(row.revision), link: row.link });
    }
    return links;
  }

  async write(checkpoint: SignedCheckpoint, seals: readonly EventSeal[]): Promise<void> {
    this.open().write(checkpoint, seals);
  }

  async checkpoints(from: number, limit: number): Promise<SignedCheckpoint[]> {
    return this.open().checkpoints.all(from, limit).map(toCheckpoint);
  }

  async sealsOf(checkpoint: number): Promise<EventSeal[]> {
    return this.open().sealsOf.all(checkpoint).map(toSeal);
  }

  async sealOf(streamId: string, revision: number): Promise<EventSeal | null> {
    const row = this.open().sealOf.get(streamId, revision);
    return row ? toSeal(row) : null;
  }

  async sealsOfStream(streamId: string): Promise<EventSeal[]> {
    return this.open().sealsOfStream.all(streamId).map(toSeal);
  }

  async close(): Promise<void> {
    this.db?.close();
    [this.db, this.programs] = [null, null];
  }
}
