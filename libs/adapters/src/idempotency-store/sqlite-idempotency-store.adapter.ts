import { ClaimOutcome, IdempotencyClaim, IdempotencyStore, RecordedAnswer } from '@deals/kernel';
import { SqliteWriteThread } from '../sqlite/write-thread';
import { AnswerArgs, ClaimArgs, KeyRow } from './idempotent-answers.writes';

/**
 * The embedded idempotency store: claims and answers in their own SQLite file beside the event log
 * (`idempotency.sqlite`), read and written by a write thread (group commit, off the event loop): a
 * claim before its request runs, an answer before it is sent. Written with synchronous=NORMAL: what is
 * written survives the process's crash (it is in the WAL file), and only a power loss can take the
 * last writes; a lost answer's repeat then runs again, and a lost claim's repeat is a new run
 * (a purchase's is still made once: the log has the first run's, under the key's id and time). A
 * synced write would add a commit to every keyed request's wait. One process serves a data folder
 * (its lock), so the requests it runs are known from its memory, and a claim in the file that it
 * does not run was left by a process that died.
 */
export class SqliteIdempotencyStore extends IdempotencyStore {
  private readonly writer: SqliteWriteThread;
  /** The keys this process is running, with their requests' fingerprints. */
  private readonly running = new Map<string, string>();

  constructor(file: string) {
    super();
    this.writer = new SqliteWriteThread({
      file,
      durability: 'normal',
      programs: require.resolve('./idempotent-answers.writes'),
      walLimitBytes: 0,
    });
  }

  override warmUp(): void {
    this.writer.prestart();
  }

  async claim({ keyId, fingerprint, now, expiresAt, runId }: IdempotencyClaim): Promise<ClaimOutcome> {
    const running = this.running.get(keyId);
    if (running !== undefined) return running === fingerprint ? { kind: 'running' } : { kind: 'mismatch' };
    // Held in memory at once, so that a claim of the same key meanwhile finds it running. The
    // look-up and the claim are one program of the write thread: the event loop reads nothing.
    this.running.set(keyId, fingerprint);
    let row: KeyRow | null;
    try {
      row = await this.writer.run<KeyRow | null>('claim', { keyId, fingerprint, startedAt: now, runId, expiresAt } satisfies ClaimArgs);
    } catch (error) {
      this.running.delete(keyId);
      throw error;
    }
    if (row === null) return { kind: 'new', startedAt: now, runId };
    if (row.fingerprint !== fingerprint || row.status !== null) this.running.delete(keyId);
    if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (row.status !== null)
      return { kind: 'answered', answer: { status: row.status, contentType: row.content_type!, body: Buffer.from(row.body!) } };
    // Claimed in the file, and not by this process: by one that died before answering.
    return { kind: 'resumed', startedAt: row.started_at, runId: row.run_id };
  }

  async answer(keyId: string, { status, contentType, body }: RecordedAnswer): Promise<void> {
    if (!this.running.has(keyId)) return;
    try {
      await this.writer.run('answer', { keyId, status, contentType, body } satisfies AnswerArgs);
    } finally {
      this.running.delete(keyId);
    }
  }

  async abandon(keyId: string): Promise<void> {
    if (!this.running.has(keyId)) return;
    try {
      await this.writer.run('abandon', { keyId });
    } finally {
      this.running.delete(keyId);
    }
  }

  purge(now: number): Promise<number> {
    return this.writer.run<number>('purge', { now });
  }

  async close(): Promise<void> {
    await this.writer.close();
  }
}
