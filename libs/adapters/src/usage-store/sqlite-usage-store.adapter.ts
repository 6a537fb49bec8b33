import { DailyUsage, UsageDelta, UsageStore } from '@deals/kernel';
import Database from 'better-sqlite3';
import { openDurableDatabase } from '../sqlite/open-durable-database';
import { viewCheckpointer, WalCheckpointer } from '../sqlite/wal-checkpointer';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS partner_usage (
    partner_id TEXT NOT NULL, day TEXT NOT NULL, status INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (partner_id, day, status)) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS partner_usage_by_day ON partner_usage (day);
  CREATE TABLE IF NOT EXISTS credential_last_use (
    partner_id TEXT NOT NULL, credential_id TEXT NOT NULL, last_used INTEGER NOT NULL,
    PRIMARY KEY (partner_id, credential_id)) WITHOUT ROWID;
`;

function prepare(db: Database.Database) {
  db.exec(SCHEMA);
  const count = db.prepare(
    `INSERT INTO partner_usage (partner_id, day, status, count) VALUES (?, ?, ?, ?)
     ON CONFLICT (partner_id, day, status) DO UPDATE SET count = count + excluded.count`,
  );
  const used = db.prepare(
    `INSERT INTO credential_last_use (partner_id, credential_id, last_used) VALUES (?, ?, ?)
     ON CONFLICT (partner_id, credential_id) DO UPDATE SET last_used = max(last_used, excluded.last_used)`,
  );
  return {
    add: db.transaction(({ requests, lastUsed }: UsageDelta) => {
      for (const { partnerId, day, status, count: n } of requests) count.run(partnerId, day, status, n);
      for (const { partnerId, credentialId, minute } of lastUsed) used.run(partnerId, credentialId, minute);
    }),
    daily: db.prepare<[string, string], { day: string; status: number; count: number }>(
      'SELECT day, status, count FROM partner_usage WHERE partner_id = ? AND day IN (SELECT value FROM json_each(?)) ORDER BY day, status',
    ),
    lastUsed: db.prepare<[string], { credential_id: string; last_used: number }>(
      'SELECT credential_id, last_used FROM credential_last_use WHERE partner_id = ?',
    ),
    purge: db.prepare<[string]>('DELETE FROM partner_usage WHERE day < ?'),
  };
}

/**
 * The embedded usage store: a file of the data folder (`usage.sqlite`), written on the event loop
 * (a flush every few seconds is a transaction of a few rows and one sync). One process serves a
 * data folder (its lock), so its flushes are the only writes.
 */
export class SqliteUsageStore extends UsageStore {
  private programs: ReturnType<typeof prepare> | null = null;
  private db: Database.Database | null = null;
  private unwatch: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly checkpointer: WalCheckpointer = viewCheckpointer,
  ) {
    super();
  }

  /** Opened on first use (a process that never counts, such as the CLI, never opens it). */
  private open(): ReturnType<typeof prepare> {
    if (this.closed) throw new Error(`${this.file}: the usage store is closed`);
    if (this.programs === null) {
      const db = openDurableDatabase(this.file);
      this.programs = prepare(db);
      this.db = db;
      // Checkpoints on the checkpointer's thread, not inside a flush on the event loop.
      this.unwatch = this.checkpointer.watch(db.name, () => {
        this.unwatch = null;
        if (db.open) db.pragma('wal_autocheckpoint = 1000');
      });
      if (this.unwatch) db.pragma('wal_autocheckpoint = 0');
    }
    return this.programs;
  }

  async add(delta: UsageDelta): Promise<void> {
    if (delta.requests.length === 0 && delta.lastUsed.length === 0) return;
    this.open().add(delta);
  }

  async dailyUsage(partnerId: string, days: readonly string[]): Promise<DailyUsage[]> {
    const byDay = new Map<string, DailyUsage>();
    for (const { day, status, count } of this.open().daily.all(partnerId, JSON.stringify(days))) {
      let usage = byDay.get(day);
      if (!usage) byDay.set(day, (usage = { day, byStatus: {} }));
      usage.byStatus[String(status)] = count;
    }
    return [...byDay.values()];
  }

  async lastUsed(partnerId: string): Promise<Record<string, number>> {
    const found: Record<string, number> = {};
    for (const row of this.open().lastUsed.all(partnerId)) found[row.credential_id] = row.last_used;
    return found;
  }

  async purgeBefore(day: string): Promise<void> {
    if (!this.closed) this.open().purge.run(day);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unwatch?.();
    this.unwatch = null;
    this.db?.close();
    [this.db, this.programs] = [null, null];
  }
}
