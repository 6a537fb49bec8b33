import { ClaimOutcome, IdempotencyClaim, IdempotencyStore, RecordedAnswer } from '@deals/kernel';
import Database from 'better-sqlite3';
import { openDurableDatabase } from '../sqlite/open-durable-database';
import { SqliteWriteThread } from '../sqlite/write-thread';
import { ANSWERS_SCHEMA, AnswerArgs } from './idempotent-answers.writes';

interface Running {
  fingerprint: string;
  expiresAt: number;
}

/**
 * The embedded idempotency store: answers in their own SQLite file beside the event log
 * (`idempotency.sqlite`), written by a write thread (group commit, off the event loop) before the
 * answer is sent. The file is written with synchronous=NORMAL: a kept answer survives the process's
 * crash (it is in the WAL file), and only a power loss can take the last ones, whose repeats then
 * run again, as after a crash before the answer (a purchase's id comes from its key, so its repeat
 * finds and answers it: nothing is charged twice). A synced write would add a commit to every
 * keyed request's wait. One process serves a data folder (its lock), so
 * the requests being run are known from this process's memory: a claim costs one read, and a
 * request whose process died left nothing running (its retry is `new`, and the handlers find
 * what the first run wrote under the key).
 */
export class SqliteIdempotencyStore extends IdempotencyStore {
  private readonly db: Database.Database;
  private readonly writer: SqliteWriteThread;
  private readonly find: Database.Statement;
  private readonly running = new Map<string, Running>();

  constructor(file: string) {
    super();
    this.db = openDurableDatabase(file, 'normal');
    this.db.exec(ANSWERS_SCHEMA);
    this.find = this.db.prepare(
      'SELECT fingerprint, status, content_type, body FROM idempotent_answers WHERE key_id = ? AND expires_at > ?',
    );
    this.writer = new SqliteWriteThread({
      file,
      durability: 'normal',
      programs: require.resolve('./idempotent-answers.writes'),
      walLimitBytes: 0,
    });
  }

  async claim({ keyId, fingerprint, now, expiresAt }: IdempotencyClaim): Promise<ClaimOutcome> {
    const running = this.running.get(keyId);
    if (running) return running.fingerprint === fingerprint ? { kind: 'running' } : { kind: 'mismatch' };
    const row = this.find.get(keyId, now) as { fingerprint: string; status: number; content_type: string; body: Buffer } | undefined;
    if (row) {
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      return { kind: 'answered', answer: { status: row.status, contentType: row.content_type, body: row.body } };
    }
    this.running.set(keyId, { fingerprint, expiresAt });
    return { kind: 'new' };
  }

  async answer(keyId: string, { status, contentType, body }: RecordedAnswer): Promise<void> {
    const running = this.running.get(keyId);
    if (!running) return;
    try {
      const args: AnswerArgs = { keyId, fingerprint: running.fingerprint, status, contentType, body, expiresAt: running.expiresAt };
      await this.writer.run('answer', args);
    } finally {
      this.running.delete(keyId);
    }
  }

  async abandon(keyId: string): Promise<void> {
    this.running.delete(keyId);
  }

  purge(now: number): Promise<number> {
    return this.writer.run<number>('purge', { now });
  }

  async close(): Promise<void> {
    await this.writer.close();
    this.db.close();
  }
}
