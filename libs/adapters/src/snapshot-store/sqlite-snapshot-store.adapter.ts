import { SnapshotStore, StoredSnapshot, StreamRevision } from '@deals/kernel';
import Database from 'better-sqlite3';
import { openDurableDatabase } from '../sqlite/open-durable-database';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS snapshots (
  stream_id TEXT NOT NULL,
  shape TEXT NOT NULL,
  revision INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  state TEXT NOT NULL,
  PRIMARY KEY (stream_id, shape)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS snapshot_entries (
  stream_id TEXT NOT NULL,
  shape TEXT NOT NULL,
  key TEXT NOT NULL,
  revision INTEGER NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (stream_id, shape, key)
) WITHOUT ROWID;
`;

/** Keys looked up in one statement at most (SQLite's limit on bound parameters is 32,766). */
const KEYS_A_QUERY = 500;

/**
 * Snapshots in their own SQLite file beside the event log (`snapshots.sqlite`). A cache, so it is
 * written with `synchronous=NORMAL` (a crash may lose the last snapshots, never corrupt the file)
 * from this thread: a snapshot every thousand events of a stream, each a few kilobytes and its new
 * entries, takes well under a millisecond. Several processes may share the file.
 */
export class SqliteSnapshotStore extends SnapshotStore {
  private readonly db: Database.Database;
  private readonly statements: {
    load: Database.Statement;
    save: Database.Statement;
    entry: Database.Statement;
    forgetSnapshots: Database.Statement;
    forgetEntries: Database.Statement;
  };
  private readonly lookups = new Map<number, Database.Statement>();
  private readonly saveAll: (
    streamId: string,
    shape: string,
    snapshot: StoredSnapshot,
    entries: ReadonlyArray<readonly [string, unknown]>,
  ) => void;

  constructor(file: string) {
    super();
    this.db = openDurableDatabase(file, 'normal');
    this.db.exec(SCHEMA);
    this.statements = {
      load: this.db.prepare('SELECT revision, event_id, state FROM snapshots WHERE stream_id = ? AND shape = ?'),
      save: this.db.prepare(
        `INSERT INTO snapshots (stream_id, shape, revision, event_id, state) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (stream_id, shape) DO UPDATE SET revision = excluded.revision, event_id = excluded.event_id, state = excluded.state
         WHERE excluded.revision > snapshots.revision`,
      ),
      // An entry saved again keeps the lowest revision it holds at: a process whose snapshot lost to a
      // later one (another process's) looks its entries up at its own, earlier revision.
      entry: this.db.prepare(
        `INSERT INTO snapshot_entries (stream_id, shape, key, revision, value) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (stream_id, shape, key) DO UPDATE SET revision = excluded.revision WHERE excluded.revision < snapshot_entries.revision`,
      ),
      forgetSnapshots: this.db.prepare('DELETE FROM snapshots WHERE stream_id = ?'),
      forgetEntries: this.db.prepare('DELETE FROM snapshot_entries WHERE stream_id = ?'),
    };
    this.saveAll = this.db.transaction((streamId, shape, snapshot, entries) => {
      this.statements.save.run(streamId, shape, snapshot.revision, snapshot.eventId, JSON.stringify(snapshot.state));
      for (const [key, value] of entries) this.statements.entry.run(streamId, shape, key, snapshot.revision, JSON.stringify(value));
    });
  }

  async load(streamId: string, shape: string): Promise<StoredSnapshot | null> {
    const row = this.statements.load.get(streamId, shape) as { revision: number; event_id: string; state: string } | undefined;
    return row ? { revision: row.revision, eventId: row.event_id, state: JSON.parse(row.state) } : null;
  }

  async save(streamId: string, shape: string, snapshot: StoredSnapshot, entries: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    this.saveAll(streamId, shape, snapshot, entries);
  }

  async lookup(streamId: string, shape: string, keys: readonly string[], atRevision: StreamRevision): Promise<Array<[string, unknown]>> {
    const found: Array<[string, unknown]> = [];
    for (let i = 0; i < keys.length; i += KEYS_A_QUERY) {
      const some = keys.slice(i, i + KEYS_A_QUERY);
      const rows = this.lookupOf(some.length).all(streamId, shape, atRevision, ...some) as Array<{ key: string; value: string }>;
      for (const row of rows) found.push([row.key, JSON.parse(row.value)]);
    }
    return found;
  }

  /** The lookup of `count` keys (prepared once for each count: a command names one or two). */
  private lookupOf(count: number): Database.Statement {
    let statement = this.lookups.get(count);
    if (!statement) {
      const keys = Array.from({ length: count }, () => '?').join(',');
      statement = this.db.prepare(
        `SELECT key, value FROM snapshot_entries WHERE stream_id = ? AND shape = ? AND revision <= ? AND key IN (${keys})`,
      );
      this.lookups.set(count, statement);
    }
    return statement;
  }

  async forget(streamId: string): Promise<void> {
    this.db.transaction(() => {
      this.statements.forgetSnapshots.run(streamId);
      this.statements.forgetEntries.run(streamId);
    })();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
