import { workerModulePath } from '@deals/kernel';
import { join } from 'node:path';
import { MessageChannel, MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { DocumentWrites } from './document-writes';
import { ANSWERED, CONTROL_SLOTS, GONE, LEAVE } from './view-write-thread.protocol';
import type { ViewWriteReply, ViewWriteRequest, ViewWriteThreadData } from './view-write-thread.protocol';

/** The longest the event loop waits for the thread's answer to a write it must see done (a query's, a close's). */
const WAIT_LIMIT_MS = 15_000;
/** A blocked wait checks for the answer at least this often (the thread may have stopped without one). */
const WAIT_SLICE_MS = 50;

/** How long the thread outlives the last file released: views closed and opened again at once on a folder keep it. */
const IDLE_STOP_MS = 1000;

/** The thread did not answer within the wait limit; the write may still be under way there. */
export class ViewWriteNotAnswered extends Error {
  constructor(file: string, limitMs = WAIT_LIMIT_MS) {
    super(`${file}: the view write thread did not answer within ${limitMs / 1000} s`);
    this.name = 'ViewWriteNotAnswered';
  }
}

interface Thread {
  worker: Worker;
  port: MessagePort;
  /** The slots shared with it (see the protocol). */
  control: Int32Array;
}

/**
 * Writes the documents of disk-resident view generations to their files from a thread of its own
 * (one for the process, a connection per file there): the JSON text is made on the event loop, the
 * SQLite work (the rows, their keys, the commit and the WAL's checkpoints) is the thread's. Writes
 * are done in the order sent and each is answered once committed or failed. A caller that must see
 * a write done before it goes on (a query reading the keys table, a close) waits for it in place:
 * `waitFor` blocks the loop until the answer comes, by a shared counter the thread raises after each.
 *
 * The thread is never terminated: it may be inside a statement, and one that fails in a thread
 * being terminated aborts the whole process. It is asked to leave instead, and does so between
 * requests. One that does not answer in time is left that way; no other thread starts before it
 * has closed its files, so that the writes reach each file in the order sent (one that was not
 * answered may still be committed, but before anything sent after it).
 */
export class ViewWriteThread {
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private control: Int32Array | null = null;
  /** A thread asked to leave that may still be inside a statement; null once it has closed its files. */
  private leaving: Thread | null = null;
  private sent = 0;
  /** Requests sent and not answered yet: what to call with each answer (an error's message or null). */
  private readonly waiting = new Map<number, (error: string | null) => void>();
  /** The files the thread may hold a connection to: written, and not released since. */
  private readonly files = new Set<string>();
  /** Ends the thread, set while it holds no file. */
  private idle: NodeJS.Timeout | null = null;

  /** `waitLimitMs`: the longest `waitFor` blocks before the thread is taken as not answering. */
  constructor(private readonly waitLimitMs = WAIT_LIMIT_MS) {}

  /** Sends `writes` for `file` (keyed on `fields`); `done` is called with null once committed, else with why it failed. Returns the request's number. */
  write(file: string, fields: readonly string[], writes: DocumentWrites, done: (error: string | null) => void): number {
    const seq = this.send({ file, fields: [...fields], writes }, done);
    this.files.add(file);
    return seq;
  }

  /**
   * Blocks until request `seq` is answered (its `done` called), handling the answers that come
   * before it. Past the wait limit, the thread is left (see `detach`) and ViewWriteNotAnswered thrown.
   */
  waitFor(seq: number, file: string): void {
    const deadline = Date.now() + this.waitLimitMs;
    while (this.waiting.has(seq) && this.control) {
      const seen = Atomics.load(this.control, ANSWERED);
      const received = this.port && receiveMessageOnPort(this.port);
      if (received) {
        this.answer(received.message as ViewWriteReply);
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        // Hung, slow or gone (its exit is an event, not seen while the loop waits here).
        const error = new ViewWriteNotAnswered(file, this.waitLimitMs);
        this.detach(error.message);
        throw error;
      }
      Atomics.wait(this.control, ANSWERED, seen, Math.min(left, WAIT_SLICE_MS));
    }
  }

  /**
   * Closes the thread's connection to `file` and waits for that (before the file is closed here, or
   * removed). The last file released ends the thread soon, as it then holds no connection: a
   * process whose views have all closed keeps no thread, and the next write starts another.
   */
  release(file: string): void {
    this.files.delete(file);
    if (!this.worker) return;
    const seq = this.send({ release: file }, () => undefined);
    this.waitFor(seq, file);
    if (this.files.size > 0) return;
    this.idle = setTimeout(() => {
      this.idle = null;
      if (this.files.size === 0 && this.waiting.size === 0) this.stop();
    }, IDLE_STOP_MS);
    this.idle.unref();
  }

  /** Posts a request; throws (registering nothing) when the thread cannot be started or reached. */
  private send(request: Omit<ViewWriteRequest, 'seq'>, done: (error: string | null) => void): number {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const port = this.port ?? this.start();
    const seq = ++this.sent;
    port.postMessage({ ...request, seq } satisfies ViewWriteRequest);
    this.waiting.set(seq, done);
    // The process waits for what it sent (a timer's write, then nothing else to do: it would exit first).
    if (this.waiting.size === 1) this.worker?.ref();
    return seq;
  }

  private start(): MessagePort {
    if (this.leaving && Atomics.load(this.leaving.control, GONE) === 0)
      throw new Error('the view write thread that did not answer has not finished its write yet');
    this.leaving = null;
    const control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * Int32Array.BYTES_PER_ELEMENT));
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(workerModulePath(join(__dirname, 'view-write-thread.worker')), {
      workerData: { port: port2, control } satisfies ViewWriteThreadData,
      transferList: [port2],
    });
    port1.on('message', (reply: ViewWriteReply) => this.answer(reply));
    // Neither keeps the process alive while nothing is sent (see `send`).
    port1.unref();
    worker.on('error', (error) => process.emitWarning(`the view write thread failed: ${error.message}`));
    worker.on('exit', () => this.lose(worker));
    worker.unref();
    this.worker = worker;
    this.port = port1;
    this.control = control;
    return port1;
  }

  private answer({ seq, error }: ViewWriteReply): void {
    const done = this.waiting.get(seq);
    this.waiting.delete(seq);
    if (this.waiting.size === 0) this.worker?.unref();
    done?.(error);
  }

  /** Asks the thread to leave (between requests: see the worker) and forgets it; the next write starts another. */
  private letGo(): Thread | null {
    const { worker, port, control } = this;
    this.worker = null;
    this.port = null;
    this.control = null;
    if (!worker || !port || !control) return null;
    Atomics.store(control, LEAVE, 1);
    // Its side sees the port close once it is between requests, idle or not.
    port.close();
    return { worker, port, control };
  }

  /** Ends the thread once it holds no connection (every file released) and no request: it has nothing left to finish. */
  private stop(): void {
    this.letGo();
  }

  /**
   * The thread did not answer in time: left to finish its statement and end (the process waits for
   * that: ended in a statement at exit, it would abort too), and no other started before it has;
   * what it held is failed now (written again from what is pending: the rows are the same).
   */
  private detach(error: string): void {
    const left = this.letGo();
    if (left) {
      left.worker.ref();
      this.leaving = left;
    }
    this.files.clear();
    this.failWaiting(error);
  }

  /** The thread stopped: what it held is failed, and the next write starts another. */
  private lose(worker: Worker): void {
    if (this.leaving?.worker === worker) this.leaving = null;
    if (this.worker !== worker) return;
    this.letGo();
    this.files.clear();
    this.failWaiting('the view write thread stopped');
  }

  private failWaiting(error: string): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const done of waiting) done(error);
  }
}

/** The process's one view write thread (started on first use). */
export const viewWriteThread = new ViewWriteThread();
