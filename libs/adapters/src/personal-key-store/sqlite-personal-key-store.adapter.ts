import { PersonalKeyStore } from '@deals/kernel';
import { Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { openDurableDatabase } from '../sqlite/open-durable-database';
import { SqliteWriteThread, WriteOutcomeUnknown } from '../sqlite/write-thread';
import { preparePersonalKeysFile } from './personal-keys.writes';

/** Checkpoints of the keys file an erasure tries, and the wait between two, while another connection keeps it busy. */
const TRUNCATE_ATTEMPTS = 20;
const TRUNCATE_WAIT_MS = 50;

/**
 * The embedded personal-data keys: a file of the data folder (`personal-keys.sqlite`), written by a
 * thread of its own in group commits (a new user's key is synced before its first event is written,
 * and no request waits for the disk meanwhile). Deleted rows are zeroed, and an erasure ends by
 * emptying the write-ahead log, so no copy of an erased key stays in the file or beside it.
 */
export class SqlitePersonalKeyStore extends PersonalKeyStore {
  private readonly db: Database.Database;
  private readonly writer: SqliteWriteThread;
  private readonly keyOfUser: Database.Statement<[string], Buffer>;
  private readonly erasedUser: Database.Statement<[string], number>;

  constructor(readonly file: string) {
    super();
    this.db = openDurableDatabase(file);
    preparePersonalKeysFile(this.db);
    this.keyOfUser = this.db.prepare<[string], Buffer>('SELECT key FROM personal_keys WHERE user_id = ?').pluck();
    this.erasedUser = this.db.prepare<[string], number>('SELECT 1 FROM erased_users WHERE user_id = ?').pluck();
    this.writer = new SqliteWriteThread({
      file,
      durability: 'full',
      programs: require.resolve('./personal-keys.writes'),
      walLimitBytes: 0,
    });
  }

  async keyFor(userId: string): Promise<Buffer | null> {
    const kept = this.keyOfUser.get(userId);
    if (kept) return kept;
    if (this.erasedUser.get(userId)) return null;
    const key = await this.repeatable(() => this.writer.run<Uint8Array | null>('keyFor', { userId, key: randomBytes(32) }));
    return key ? Buffer.from(key) : null;
  }

  async keyOf(userId: string): Promise<{ key: Buffer | null; erased: boolean }> {
    const key = this.keyOfUser.get(userId) ?? null;
    return { key, erased: key === null && Boolean(this.erasedUser.get(userId)) };
  }

  async keptOf(userIds: readonly string[]): Promise<string[]> {
    return userIds.filter((userId) => this.keyOfUser.get(userId) !== undefined);
  }

  async erase(userId: string, erasedAt: Date): Promise<void> {
    await this.repeatable(() => this.writer.run('erase', { userId, erasedAt: erasedAt.toISOString() }));
    // The key's page, zeroed in the database file, and the write-ahead log emptied of its earlier
    // copies: tried again while another connection (the CLI's, a reader) keeps it busy.
    for (let attempt = 1; ; attempt++) {
      const [{ busy }] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      if (!busy) return;
      if (attempt === TRUNCATE_ATTEMPTS)
        return void new Logger('PersonalKeys').warn(
          `${this.file}: its write-ahead log stayed busy; the erased key's copies in it go at its next checkpoint`,
        );
      await new Promise((resolve) => setTimeout(resolve, TRUNCATE_WAIT_MS));
    }
  }

  async close(): Promise<void> {
    await this.writer.close();
    this.db.close();
  }

  /** Both writes give the same outcome when made again: one whose answer was lost is simply repeated. */
  private async repeatable<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof WriteOutcomeUnknown)) throw error;
      return write();
    }
  }
}
