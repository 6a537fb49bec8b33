/**
 * The worker side of {@link SqliteWriteThread}: owns the file's one write connection and runs the
 * batches it has received since its last commit as one `BEGIN IMMEDIATE` transaction, each request
 * in its own savepoint (a request that throws is undone alone). The commit's sync happens here, off
 * the main event loop.
 * Imports nothing but relative modules and better-sqlite3: it is loaded by path (see the thread).
 */
import type Database from 'better-sqlite3';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { openDurableDatabase } from './open-durable-database';
import {
  HELPER_THREAD_NICE,
  type WriteBatch,
  type WriteProgramModule,
  type WriteReply,
  type WriteThreadData,
} from './write-thread.protocol';

const { file, durability, programs, walLimitBytes } = workerData as WriteThreadData;
// Linux schedules threads on their own: this one mostly waits for the disk, and waking it must not
// take the CPU from the event loop that serves requests (elsewhere the call would apply to the
// whole process, so it is made on Linux only). Threads a thread creates inherit its nice value: this
// one must not be the first to use libuv's shared pool (no async fs, crypto or zlib calls here).
if (process.platform === 'linux') {
  try {
    setPriority(HELPER_THREAD_NICE);
  } catch {
    // not allowed here (an unusual sandbox): run at the usual priority
  }
}
const db: Database.Database = openDurableDatabase(file, durability);
// eslint-disable-next-line @typescript-eslint/no-require-imports
const writes = (require(programs) as WriteProgramModule).prepareWrites(db);
const port = parentPort!;

/** Batches received while a commit ran, waiting for the next one. */
let waiting: WriteBatch[] = [];

port.on('message', (batch: WriteBatch | 'close') => {
  if (batch === 'close') {
    commitWaiting();
    db.close();
    port.close();
    return;
  }
  waiting.push(batch);
  // The batches the thread sent while this one committed arrive together: they share the next commit.
  if (waiting.length === 1) setImmediate(commitWaiting);
});

/**
 * Commits every batch received since the last commit in one transaction (one sync for all), then
 * answers each batch on its own, in order. The thread sends a batch as soon as it has one, so that
 * an idle worker commits at once; when the disk is slower than the requests come, the batches
 * queue here and this joins them, instead of paying one sync per batch.
 */
function commitWaiting(): void {
  if (waiting.length === 0) return;
  const batches = waiting;
  waiting = [];
  for (const reply of runBatches(batches)) port.postMessage(reply);
  if (walLimitBytes) truncateWalIfLarge(walLimitBytes);
}

type Program = (args: never, scratch: Map<string, unknown>) => unknown;

/**
 * One request in a savepoint of the group's transaction (undone alone if it throws). Made once:
 * better-sqlite3 builds each transaction function with four wrappers and their properties, which
 * cost more than a request's own inserts when made per request.
 */
const inSavepoint = db.transaction((program: Program, args: never, scratch: Map<string, unknown>) => program(args, scratch));

/** The group: every request of the batches, in order, in one `BEGIN IMMEDIATE` transaction. */
const inGroupTransaction = db.transaction((batches: WriteBatch[], replies: unknown[][]) => {
  const scratch = new Map<string, unknown>();
  batches.forEach((batch, b) => {
    const results = replies[b];
    for (let i = 0; i < batch.length; i += 2) {
      const kind = batch[i] as string;
      const program = writes[kind];
      try {
        if (!program) throw new Error(`no write program named ${kind}`);
        const value = inSavepoint(program, batch[i + 1] as never, scratch);
        results.push(1, value);
      } catch (error) {
        // Some errors (disk full, I/O, out of memory) make SQLite roll the whole transaction
        // back; the requests after would then commit one by one, and those before are undone:
        // fail the whole transaction instead.
        if (!db.inTransaction) throw error;
        results.push(0, describe(error));
      }
    }
  });
}).immediate;

function runBatches(batches: WriteBatch[]): WriteReply[] {
  const replies: unknown[][] = batches.map(() => []);
  try {
    inGroupTransaction(batches, replies);
    return replies;
  } catch (error) {
    // The transaction could not begin or commit (lock timeout, disk full): nothing of it is written.
    const failed = describe(error);
    return batches.map(() => ({ failed }));
  }
}

let checkedAt = 0;
function truncateWalIfLarge(limit: number): void {
  const now = Date.now();
  if (now - checkedAt < 30_000) return;
  checkedAt = now;
  try {
    const pages = db.pragma('wal_checkpoint(PASSIVE)', { simple: false }) as Array<{ log: number }>;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    if ((pages[0]?.log ?? 0) * pageSize > limit) db.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // a reader of another process holds the WAL: try again later
  }
}

function describe(error: unknown): { name: string; message: string; code?: string } {
  if (error instanceof Error) return { name: error.name, message: error.message, code: (error as { code?: string }).code };
  return { name: 'Error', message: String(error) };
}
