import { workerModulePath } from '@deals/kernel';
import { join } from 'node:path';
import { MessageChannel, MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { DocumentWrites } from './document-writes';
import type { ViewWriteReply, ViewWriteRequest, ViewWriteThreadData } from './view-write-thread.worker';

/** The longest the event loop waits for the thread's answer to a write it must see done (a query's, a close's). */
const WAIT_LIMIT_MS = 15_000;
/** A blocked wait checks for the answer at least this often (the thread may have stopped without one). */
const WAIT_SLICE_MS = 50;

/** How long the thread outlives the last file released: views closed and opened again at once on a folder keep it. */
const IDLE_STOP_MS = 1000;

/** The thread did not answer within {@link WAIT_LIMIT_MS}; the write is still under way there. */
export class ViewWriteNotAnswered extends Error {
  constructor(file: string) {
    super(`${file}: the view write thread did not answer within ${WAIT_LIMIT_MS / 1000} s`);
    this.name = 'ViewWriteNotAnswered';
  }
}

/**
 * Writes the documents of disk-resident view generations to their files from a thread of its own
 * (one for the process, a connection per file there): the JSON text is made on the event loop, the
 * SQLite work (the rows, their keys, the commit and the WAL's checkpoints) is the thread's. Writes
 * are done in the order sent and each is answered once committed or failed. A caller that must see
 * a write done before it goes on (a query reading the keys table, a close) waits for it in place:
 * `waitFor` blocks the loop until the answer comes, by a shared counter the thread raises after each.
 */
export class ViewWriteThread {
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  /** The last request the thread has answered (raised after the answer is posted). */
  private readonly answered = new Int32Array(new SharedArrayBuffer(4));
  private sent = 0;
  /** Requests sent and not answered yet: what to call with each answer (an error's message or null). */
  private readonly waiting = new Map<number, (error: string | null) => void>();
  /** The files the thread may hold a connection to: written, and not released since. */
  private readonly files = new Set<string>();
  /** Ends the thread, set while it holds no file. */
  private idle: NodeJS.Timeout | null = null;

  /** Sends `writes` for `file` (keyed on `fields`); `done` is called with null once committed, else with why it failed. Returns the request's number. */
  write(file: string, fields: readonly string[], writes: DocumentWrites, done: (error: string | null) => void): number {
    const seq = this.send({ file, fields: [...fields], writes }, done);
    this.files.add(file);
    return seq;
  }

  /** Blocks until request `seq` is answered (its `done` called), handling the answers that come before it. */
  waitFor(seq: number, file: string): void {
    const deadline = Date.now() + WAIT_LIMIT_MS;
    while (this.waiting.has(seq)) {
      const seen = Atomics.load(this.answered, 0);
      const received = this.port && receiveMessageOnPort(this.port);
      if (received) {
        this.answer(received.message as ViewWriteReply);
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        // Hung or gone (its exit is an event, not seen while the loop waits here): stopped, so that
        // its exit fails what it held and the next write starts another.
        void this.worker?.terminate();
        throw new ViewWriteNotAnswered(file);
      }
      Atomics.wait(this.answered, 0, seen, Math.min(left, WAIT_SLICE_MS));
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
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(workerModulePath(join(__dirname, 'view-write-thread.worker')), {
      workerData: { port: port2, answered: this.answered } satisfies ViewWriteThreadData,
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
    return port1;
  }

  private answer({ seq, error }: ViewWriteReply): void {
    const done = this.waiting.get(seq);
    this.waiting.delete(seq);
    if (this.waiting.size === 0) this.worker?.unref();
    done?.(error);
  }

  /** Ends the thread once it holds no connection (every file released) and no request: it has nothing left to finish. */
  private stop(): void {
    const worker = this.worker;
    this.port?.close();
    this.worker = null;
    this.port = null;
    void worker?.terminate();
  }

  /** The thread stopped: what it held is failed (written again from what is pending: the rows are the same), and the next write starts another. */
  private lose(worker: Worker): void {
    if (this.worker !== worker) return;
    this.port?.close();
    this.worker = null;
    this.port = null;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const done of waiting) done('the view write thread stopped');
  }
}

/** The process's one view write thread (started on first use). */
export const viewWriteThread = new ViewWriteThread();
