import { workerModulePath } from '@deals/kernel';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

/** How long the thread outlives the last file watched: a store closed and another opened at once on its folder keep it. */
const IDLE_STOP_MS = 1000;

/**
 * Checkpoints the WAL of SQLite files from a thread of its own. A connection that commits on the
 * event loop otherwise checkpoints inside its commits (SQLite's `wal_autocheckpoint`): it copies
 * the WAL's pages into the database file and syncs it, stalling every request meanwhile, and the
 * copies grow with the file (for the embedded views, a growing share of the event loop as
 * purchases accumulate: docs/performance.md). A writer that turns its own
 * checkpoints off when {@link watch} accepts its file is checkpointed here every `intervalMs`.
 *
 * A file the thread cannot open or keep checkpointing is handed back: its `handBack` callback runs
 * (the writer turns its own checkpoints on again). If the thread itself fails, every file is handed
 * back and `watch` refuses from then on, so no WAL is ever left to grow. The thread runs while some
 * file is watched: a moment after the last is unwatched it closes its connections and ends.
 */
export class WalCheckpointer {
  private worker: Worker | null = null;
  private failed = false;
  private pings = 0;
  /** Pings sent and not yet answered, by id, with the thread asked: one listener on each thread answers them all (a store closing its collections pings once for each). */
  private readonly waiting = new Map<number, { worker: Worker; answer: () => void }>();
  /** Watched files: how many writers watch each (stores on one folder share a file), and their hand-back callbacks. */
  private readonly files = new Map<string, Set<() => void>>();
  /** Until the threads stopped once no file was watched have closed their connections and exited. */
  private stopping: Promise<void> = Promise.resolve();
  /** Ends the thread, set while no file is watched. */
  private idle: NodeJS.Timeout | null = null;

  constructor(private readonly options: { intervalMs: number }) {}

  /**
   * Checkpoints `file` here from now on, and calls `handBack` if it stops doing so. Returns the
   * function that ends this watch, or null when the thread has failed (the writer then keeps its
   * own checkpoints).
   */
  watch(file: string, handBack: () => void): (() => void) | null {
    if (this.failed) return null;
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    let writers = this.files.get(file);
    if (!writers) {
      this.files.set(file, (writers = new Set()));
      (this.worker ?? this.start()).postMessage({ watch: file });
    }
    // A wrapper of its own, so that two watches with the same callback are counted apart.
    const writer = () => handBack();
    writers.add(writer);
    return () => {
      const current = this.files.get(file);
      if (!current?.delete(writer) || current.size > 0) return;
      this.files.delete(file);
      this.worker?.postMessage({ unwatch: file });
      // The last file unwatched ends the thread soon: a process whose stores have all closed keeps
      // no thread, and the next watch starts another.
      if (this.files.size === 0) {
        this.idle = setTimeout(() => {
          this.idle = null;
          this.stop();
        }, IDLE_STOP_MS);
        this.idle.unref();
      }
    };
  }

  /**
   * Resolves once the thread has handled every watch and unwatch sent so far: the files unwatched
   * are closed there (and their WAL removed when it held the last connection), so that their folder
   * may be removed.
   */
  async settled(): Promise<void> {
    const stopped = this.stopping;
    const worker = this.worker;
    if (worker) {
      const id = ++this.pings;
      await new Promise<void>((resolve) => {
        this.waiting.set(id, {
          worker,
          answer: () => {
            this.waiting.delete(id);
            // Once nothing is awaited, the thread no longer keeps the process alive.
            if (![...this.waiting.values()].some((ping) => ping.worker === worker)) worker.unref();
            resolve();
          },
        });
        // The process waits for the answer, as for any pending close.
        worker.ref();
        worker.postMessage({ ping: id });
      });
    }
    await stopped;
  }

  /** Stops the thread (its connections closed); files still watched are handed back. */
  async close(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const worker = this.worker;
    if (worker) {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.ref();
      worker.postMessage({ close: true });
      await exited;
    }
    await this.stopping;
  }

  /** Ends the thread, which watches no file: it closes what connections it has left and exits. */
  private stop(): void {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // The process waits for the files to be closed, as for any pending close.
    worker.ref();
    worker.postMessage({ close: true });
    const before = this.stopping;
    this.stopping = Promise.all([before, exited]).then(() => undefined);
  }

  private start(): Worker {
    const worker = new Worker(workerModulePath(join(__dirname, 'wal-checkpointer.worker')), { workerData: this.options });
    worker.on('message', ({ handBack, pong }: { handBack?: string; pong?: number }) => {
      if (handBack) this.handBack(handBack);
      if (pong !== undefined) this.waiting.get(pong)?.answer();
    });
    const fail = () => {
      // A thread that is gone answers nothing more: whoever waits for it is done waiting.
      for (const ping of [...this.waiting.values()]) if (ping.worker === worker) ping.answer();
      // One stopped once it watched no file ended as asked.
      if (this.worker !== worker) return;
      this.worker = null;
      this.failed = true;
      for (const file of [...this.files.keys()]) this.handBack(file);
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    // It only ever helps: the process does not wait for it. (After the listeners: adding a
    // 'message' listener to a worker refs it again on Node 20.)
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private handBack(file: string): void {
    const writers = this.files.get(file);
    this.files.delete(file);
    for (const writer of writers ?? []) writer();
  }
}

/** The process's one checkpointer for the embedded views' files (started on first use, ended once its stores have closed). */
export const viewCheckpointer = new WalCheckpointer({ intervalMs: 1000 });
