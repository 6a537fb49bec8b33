import { Clock, EventStore, LogSealer, SealRaced, SealStore, workerModulePath } from '@deals/kernel';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { SQLITE_POSITION_WIDTH, SqliteEventStore } from '../event-store/sqlite/sqlite-event-store.adapter';
import type { SealAnswer, SealingThreadData } from './sqlite-sealing-thread.worker';
import { SqliteSealStore } from './sqlite-seal-store.adapter';

/**
 * Seals the embedded log from a thread of its own: it reads the log's file and writes the seals'
 * with connections of its own, hashing each event's stored JSON text, so that requests never wait
 * while events are read back, hashed and their seals written (docs/performance.md). One checkpoint
 * a message; a thread that fails is started again at the next round.
 */
export class SqliteSealingThread implements LogSealer {
  private worker: Worker | null = null;
  private requests = 0;
  private readonly waiting = new Map<number, { resolve: (answer: SealAnswer) => void; reject: (error: Error) => void }>();

  constructor(
    private readonly data: Omit<SealingThreadData, 'positionWidth'>,
    private readonly clock: Clock,
  ) {}

  /** Seals the next checkpoint; its number, or 0 when nothing was new. */
  async sealNext(): Promise<number> {
    const answer = await this.ask(this.clock.now().toISOString());
    if ('error' in answer) throw answer.raced ? new SealRaced(answer.raced) : new Error(`the sealing thread: ${answer.error}`);
    return answer.written;
  }

  async sealAll(stopping: () => boolean = () => false): Promise<number> {
    let written = 0;
    while (!stopping() && (await this.sealNext()) > 0) {
      written++;
      await nextTurn();
    }
    return written;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private ask(sealedAt: string): Promise<SealAnswer> {
    const worker = this.worker ?? this.start();
    const id = ++this.requests;
    return new Promise<SealAnswer>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      // Waited for, the thread keeps the process alive; idle, it does not.
      worker.ref();
      worker.postMessage({ id, sealedAt });
    }).finally(() => {
      this.waiting.delete(id);
      if (this.waiting.size === 0) worker.unref();
    });
  }

  private start(): Worker {
    const worker = new Worker(workerModulePath(join(__dirname, 'sqlite-sealing-thread.worker')), {
      workerData: { ...this.data, positionWidth: SQLITE_POSITION_WIDTH } satisfies SealingThreadData,
    });
    worker.on('message', (answer: SealAnswer) => this.waiting.get(answer.id)?.resolve(answer));
    const fail = (error: unknown) => {
      if (this.worker === worker) this.worker = null;
      const reason = error instanceof Error ? error : new Error(`the sealing thread stopped (exit code ${String(error)})`);
      for (const { reject } of [...this.waiting.values()]) reject(reason);
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

/**
 * The sealer of a log kept in SQLite beside SQLite seals: a thread of its own (null for any other
 * pair of stores, which the process seals itself).
 */
export function sealingThreadFor(log: EventStore, seals: SealStore, secret: Buffer, clock: Clock): SqliteSealingThread | null {
  return log instanceof SqliteEventStore && seals instanceof SqliteSealStore
    ? new SqliteSealingThread({ eventsFile: log.file, sealsFile: seals.file, secret }, clock)
    : null;
}
