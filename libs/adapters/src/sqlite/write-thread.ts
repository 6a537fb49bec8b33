import { workerModulePath } from '@deals/kernel';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { WriteBatch, WriteFailure, WriteReply, WriteThreadData } from './write-thread.protocol';

interface Request {
  kind: string;
  args: unknown;
  onWritten?: (value: never) => void;
  resolve: (value: never) => void;
  reject: (error: unknown) => void;
}

/** Batches sent to the worker and not yet answered: one committing, the others queued behind it. */
const IN_FLIGHT = 4;

/** A write the worker could not do; `code` is SQLite's (e.g. SQLITE_BUSY) when it has one. */
export class SqliteWriteFailed extends Error {
  readonly code?: string;
  constructor(failure: WriteFailure) {
    super(failure.message);
    this.name = failure.name === 'Error' ? 'SqliteWriteFailed' : failure.name;
    this.code = failure.code;
  }
}

/**
 * The write thread stopped while this write was sent to it and unanswered: the write may or may
 * not have been committed. A caller that can tell from the file (the event log: by its event ids)
 * or that can repeat the write idempotently (the vault: by its key) resolves it; others report it.
 */
export class WriteOutcomeUnknown extends Error {
  constructor(file: string, cause: unknown) {
    super(`${file}: the write thread stopped before answering; the write may or may not have been committed`, { cause });
    this.name = 'WriteOutcomeUnknown';
  }
}

/**
 * Writes to one SQLite file from a worker thread, in pipelined group commits: while one batch is
 * being committed (and synced) by the worker, the requests that arrive meanwhile gather into the
 * next, which is sent at once so that it waits in the worker's queue (at most {@link IN_FLIGHT}
 * batches are out). The worker so goes from one commit to the next without waiting for the busy
 * event loop to read its answer. The main event loop never waits for the disk, and one sync serves
 * every request of a batch. Batches are committed in the order sent; those that reach the worker
 * while it commits are committed together in the next transaction (one sync for all of them).
 * A request is answered only once its batch is committed, so a read on the main thread's own
 * connection afterwards sees it. Reads stay on the main thread (WAL lets them run beside the writer).
 */
export class SqliteWriteThread {
  private worker: Worker | null = null;
  private queue: Request[] = [];
  /** Batches sent and not yet answered, oldest first (the worker answers in order). */
  private inFlight: Request[][] = [];
  private scheduled = false;
  /** The worker failed and has not exited yet: nothing more is sent to it; the queue waits for the next one. */
  private dying = false;
  private closing: Promise<void> | null = null;
  /** Called after every batch that wrote something (e.g. to wake subscriptions): its requests, and seconds from its sending to its answer. */
  onCommitted: (requests: number, seconds: number) => void = () => undefined;
  /** When each batch in flight was sent (performance.now()), in order. */
  private readonly sentAt: number[] = [];

  constructor(private readonly data: WriteThreadData) {}

  /**
   * Queues a write; resolves once its batch is committed. `onWritten` sees the result first, at
   * the moment the answer arrives and before `onCommitted` runs (e.g. to cache what was written
   * before anyone is told there is something new to read).
   */
  run<R>(kind: string, args: unknown, onWritten?: (value: R) => void): Promise<R> {
    if (this.closing) return Promise.reject(new Error(`${this.data.file}: the write thread is closed`));
    return new Promise<R>((resolve, reject) => {
      this.queue.push({
        kind,
        args,
        onWritten: onWritten as ((value: never) => void) | undefined,
        resolve: resolve as (value: never) => void,
        reject,
      });
      if (this.inFlight.length < IN_FLIGHT && !this.scheduled) {
        // Gather what the code running now asks too, and send it before the loop turns: a batch
        // that waited for the loop's next check phase waited behind every socket read and every
        // answer the loop still had to handle (~2 ms of each write under load). What arrives
        // after goes out as the next batch, and the worker joins the batches that reach it while
        // it commits into one transaction, so sending sooner costs no extra syncs.
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.send();
        });
      }
    });
  }

  /** Starts the thread now, not at the first write (which would wait the few hundred milliseconds its start takes). */
  prestart(): void {
    if (!this.worker && !this.closing && !this.dying) this.start();
  }

  /** Writes what is queued, then stops the worker. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.queue.length || this.inFlight.length || this.scheduled) await new Promise((r) => setTimeout(r, 1));
      const worker = this.worker;
      this.worker = null;
      if (worker) {
        const exited = new Promise((r) => worker.once('exit', r));
        worker.ref(); // the process waits for the file to be closed
        worker.postMessage('close');
        await exited;
      }
    })();
    return this.closing;
  }

  private send(): void {
    if (this.dying || this.inFlight.length >= IN_FLIGHT || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.inFlight.push(batch);
    this.sentAt.push(performance.now());
    const worker = this.worker ?? this.start();
    worker.ref();
    const message: WriteBatch = [];
    for (const { kind, args } of batch) message.push(kind, args);
    worker.postMessage(message);
  }

  private start(): Worker {
    const worker = new Worker(workerModulePath(join(__dirname, 'write-thread.worker')), {
      workerData: { ...this.data, programs: workerModulePath(this.data.programs) } satisfies WriteThreadData,
    });
    worker.unref();
    worker.on('message', (reply: WriteReply) => this.answer(reply));
    // The batches it held are failed only once it has exited: until then it might still commit one.
    let failure: unknown = null;
    worker.on('error', (error) => {
      failure ??= error;
      if (this.worker === worker) this.dying = true;
    });
    worker.on('exit', (code) => this.lose(worker, failure ?? new Error(`${this.data.file}: the write thread stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private answer(reply: WriteReply): void {
    const batch = this.inFlight.shift() ?? [];
    const sentAt = this.sentAt.shift() ?? performance.now();
    let wrote = false;
    batch.forEach((request, i) => {
      if (!Array.isArray(reply)) return request.reject(new SqliteWriteFailed(reply.failed));
      const value = reply[2 * i + 1];
      if (reply[2 * i] === 1) {
        wrote = true;
        request.onWritten?.(value as never);
        request.resolve(value as never);
      } else {
        request.reject(new SqliteWriteFailed(value as WriteFailure));
      }
    });
    if (this.queue.length) this.send();
    else if (this.inFlight.length === 0) this.worker?.unref();
    if (wrote) this.onCommitted(batch.length, (performance.now() - sentAt) / 1000);
  }

  /**
   * The worker exited: what it held is unanswered, though any of the batches sent may have been
   * committed before it stopped, so each is failed as {@link WriteOutcomeUnknown}; the writes not
   * yet sent go to a new worker.
   */
  private lose(worker: Worker, cause: unknown): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.dying = false;
    const batches = this.inFlight;
    this.inFlight = [];
    this.sentAt.length = 0;
    const error = new WriteOutcomeUnknown(this.data.file, cause);
    for (const batch of batches) for (const request of batch) request.reject(error);
    if (this.queue.length) this.send();
  }
}
