import { ClaimOutcome, IdempotencyClaim, IdempotencyStore, RecordedAnswer } from '@deals/kernel';
import Database from 'better-sqlite3';
import { openDurableDatabase } from '../sqlite/open-durable-database';
import { viewCheckpointer, WalCheckpointer } from '../sqlite/wal-checkpointer';
import { addSize, prepareWrites, SizeChanges, SizeLedger } from './idempotent-answers.writes';

type Programs = ReturnType<typeof prepareWrites>;

const CACHE_KIB = 32 * 1024;

interface Queued {
  run: (programs: Programs) => unknown;
  resolve: (value: never) => void;
  reject: (error: unknown) => void;
}

/**
 * The embedded idempotency store: claims and answers in their own SQLite file beside the event log
 * (`idempotency.sqlite`): a claim before its request runs, an answer before it is sent. Written on
 * the event loop with synchronous=NORMAL, in group transactions (what the requests of one turn of
 * the loop ask is written together once the turn's I/O is handled): a write with no sync costs tens
 * of microseconds, mostly per transaction, where a write thread's round trip would add its wait to
 * every keyed request's, twice. What is written survives the process's crash (it is in the WAL
 * file); a power loss can take the writes since the last checkpoint (about a second): a lost
 * answer's repeat runs again as resumed, a lost claim's repeat as a new run (docs/decisions.md
 * says what that leaves open). One process serves a data folder (its lock), so the requests it
 * runs are known from its memory, and a claim in the file that it does not run was left by a
 * process that died, or released.
 */
/** How many released keys are remembered as such (see `release`). */
const MAX_RELEASED = 10_000;

export class SqliteIdempotencyStore extends IdempotencyStore {
  private db: Database.Database | null = null;
  private programs: Programs | null = null;
  private group: ((items: Queued[]) => void) | null = null;
  private queue: Queued[] = [];
  /** The keys this process is running (taken by a claim, not yet answered or released). */
  private readonly running = new Set<string>();
  /** Keys this process released unanswered since it started: their next claim resumes a run that ended. */
  private readonly released = new Set<string>();
  private unwatch: (() => void) | null = null;
  private closed = false;
  /** What each partner's kept keys take up, as committed (read from the file as it opens). */
  private readonly sizes: SizeChanges = new Map();
  private readonly ledger: SizeLedger = { current: new Map() };

  constructor(
    private readonly file: string,
    private readonly checkpointer: WalCheckpointer = viewCheckpointer,
  ) {
    super();
  }

  /** Opened on first use (the CLI, which makes the same adapters, never opens it). */
  private open(): (items: Queued[]) => void {
    if (this.group === null) {
      const db = openDurableDatabase(this.file, 'normal');
      // Keys are looked up and inserted at random places in their index: its pages stay in memory
      // (a day of keys at a thousand a second is about 4 MB of index) instead of SQLite's 2 MB.
      db.pragma(`cache_size = -${CACHE_KIB}`);
      const programs = prepareWrites(db, this.ledger);
      for (const [partner, size] of programs.sizes()) this.sizes.set(partner, size);
      // Each request in a savepoint of the group's transaction: one that throws is undone alone,
      // and so are its changes of size (counted once the group is committed).
      const one = db.transaction((item: Queued) => item.run(programs));
      this.group = db.transaction((items: Queued[]) =>
        items.map((item) => {
          const changes: SizeChanges = (this.ledger.current = new Map());
          try {
            return { ok: true, value: one(item), changes };
          } catch (error) {
            return { ok: false, value: error, changes: null };
          }
        }),
      ) as unknown as (items: Queued[]) => void;
      [this.db, this.programs] = [db, programs];
      // The WAL is copied into the file by the checkpointer's thread, not inside these commits on
      // the event loop (handed back, they checkpoint again).
      this.unwatch = this.checkpointer.watch(db.name, () => {
        this.unwatch = null;
        if (db.open) db.pragma('wal_autocheckpoint = 1000');
      });
      if (this.unwatch) db.pragma('wal_autocheckpoint = 0');
    }
    return this.group;
  }

  /** Runs `run` in the next group transaction. */
  private write<T>(run: (programs: Programs) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (value: never) => void, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    if (this.queue.length === 0 || this.closed) return;
    const items = this.queue;
    this.queue = [];
    let outcomes: Array<{ ok: boolean; value: unknown; changes: SizeChanges | null }>;
    try {
      outcomes = (this.open() as unknown as (items: Queued[]) => typeof outcomes)(items);
    } catch (error) {
      for (const item of items) item.reject(error);
      return;
    }
    for (const { changes } of outcomes) for (const [partner, bytes] of changes ?? []) addSize(this.sizes, partner, bytes);
    items.forEach((item, i) => (outcomes[i].ok ? item.resolve(outcomes[i].value as never) : item.reject(outcomes[i].value)));
  }

  override warmUp(): void {
    this.open();
  }

  /** Empty until the file is opened (a serving process opens it as it starts: `warmUp`). */
  keptBytes(): ReadonlyMap<string, number> {
    return this.sizes;
  }

  /**
   * Reads the key's row and claims it in one step of a group transaction (the event loop runs one
   * at a time): a finished key's claims all find its answer, however many come at once, and of the
   * claims of a free key the first alone takes it. `running` is what this process runs, set in the
   * same step as the claim that takes the key.
   */
  async claim({ keyId, partnerId, fingerprint, now, expiresAt, runId }: IdempotencyClaim): Promise<ClaimOutcome> {
    if (this.closed) throw new Error(`${this.file}: the idempotency store is closed`);
    let taken = false;
    let ended = false;
    const take = () => {
      this.running.add(keyId);
      taken = true;
    };
    try {
      return await this.write((programs): ClaimOutcome => {
        const row = programs.claim({ keyId, partnerId, fingerprint, startedAt: now, runId, expiresAt });
        if (row === null) {
          take();
          return { kind: 'new', startedAt: now, runId };
        }
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
        if (row.status !== null)
          return { kind: 'answered', answer: { status: row.status, contentType: row.content_type!, body: Buffer.from(row.body!) } };
        if (this.running.has(keyId)) return { kind: 'running' };
        // Claimed in the file, and not running here: released by this process, or left by one that died.
        take();
        ended = this.released.delete(keyId);
        return { kind: 'resumed', startedAt: row.started_at, runId: row.run_id, ended };
      });
    } catch (error) {
      // Its transaction undone: the key is not this claim's.
      if (taken) this.running.delete(keyId);
      if (ended) this.released.add(keyId);
      throw error;
    }
  }

  async holds(keyId: string, now: number): Promise<boolean> {
    if (this.closed) throw new Error(`${this.file}: the idempotency store is closed`);
    if (this.running.has(keyId)) return true;
    this.open();
    return this.programs!.holds(keyId, now);
  }

  /** Kept: the key stays this process's on failure (its caller releases it). */
  async answer(keyId: string, { status, contentType, body }: RecordedAnswer): Promise<void> {
    if (this.closed) throw new Error(`${this.file}: the idempotency store is closed`);
    if (!this.running.has(keyId)) return;
    await this.write((programs) => programs.answer({ keyId, status, contentType, body }));
    this.running.delete(keyId);
  }

  /** The claim stays in the file; no longer in this process's memory, its next claim resumes it (as ended). */
  async release(keyId: string): Promise<void> {
    if (!this.running.delete(keyId)) return;
    this.released.add(keyId);
    // Bounded: past it the oldest count as left by a process that died (the cautious reading).
    if (this.released.size > MAX_RELEASED) this.released.delete(this.released.values().next().value!);
  }

  purge(now: number, world?: string): Promise<number> {
    if (this.closed) return Promise.resolve(0);
    return this.write((programs) => programs.purge({ now, world }));
  }

  async close(): Promise<void> {
    this.flush();
    this.closed = true;
    this.unwatch?.();
    this.unwatch = null;
    this.db?.close();
    [this.db, this.programs, this.group] = [null, null, null];
  }
}
