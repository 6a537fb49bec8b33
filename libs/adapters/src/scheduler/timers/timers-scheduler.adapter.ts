import { assertJobId, Clock, JobCounts, JobHandler, ListedJob, ScheduledJob, Scheduler } from '@deals/kernel';
import { Logger } from '@nestjs/common';

/** Node's `setTimeout` fires at once for anything above this (a signed 32-bit count of ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface TimersSchedulerOptions {
  /** Runs of one job in all, the first included (as BullMQ's `attempts`). Default 3. */
  attempts?: number;
  /** Wait before the first retry; it doubles for each later one. Default 500 ms. */
  backoffMs?: number;
  /** Told of a job that failed its last attempt. Default: an error line of the service log. */
  onFailed?: (job: ScheduledJob, error: unknown) => void;
}

interface Entry {
  job: ScheduledJob;
  attemptsMade: number;
  /** When the next run is due, in the clock's time (a retry moves it). */
  dueAt: number;
  timer?: NodeJS.Timeout;
  running?: boolean;
  /** What was asked of the id while a run of it was under way, done once the run ends (the latest ask). */
  asked?: ScheduledJob | 'cancel';
}

/** Failed jobs kept for `list` (the count goes on). */
const FAILED_KEPT = 100;

/**
 * The embedded Scheduler: one timer per job in this process's memory, nothing persisted (the
 * service rebuilds its jobs from the views at start). Arming an id again replaces its timer.
 * Jobs armed before `start()`, or before a handler of their kind is registered, wait until both
 * have happened. A handler that throws is retried with exponential back-off, up to `attempts`
 * runs in all.
 *
 * Timers are `unref`ed, so pending jobs alone do not keep a process alive: the CLI exits when its
 * command is done. The server process stays up because its HTTP server holds the event loop.
 */
export class TimersScheduler extends Scheduler {
  readonly backend = 'in-process';
  private readonly entries = new Map<string, Entry>();
  private readonly handlers = new Map<string, JobHandler>();
  private readonly running = new Set<Promise<void>>();
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly onFailed: (job: ScheduledJob, error: unknown) => void;
  private started = false;
  private closed = false;
  private failedCount = 0;
  private readonly failed: ListedJob[] = [];

  constructor(
    private readonly clock: Clock,
    options: TimersSchedulerOptions = {},
  ) {
    super();
    this.attempts = options.attempts ?? 3;
    this.backoffMs = options.backoffMs ?? 500;
    const logger = new Logger('Scheduler');
    this.onFailed =
      options.onFailed ??
      ((job, error) => logger.error({ err: error, jobId: job.id }, `scheduled job ${job.id} failed after ${this.attempts} attempts`));
  }

  /**
   * Arms a job, replacing what its id held. An id whose run is under way is armed once that run has
   * ended (as BullMQ does): two runs of one id never overlap.
   */
  async schedule(job: ScheduledJob): Promise<void> {
    assertJobId(job.id);
    if (this.closed) throw new Error('scheduler is closed');
    const copy = { ...job, data: { ...job.data } };
    const running = this.entries.get(job.id);
    if (running?.running) running.asked = copy;
    else this.replace(copy);
  }

  /** Drops a job; one under way runs to its end, and is neither retried nor armed again after it. */
  async cancel(id: string): Promise<void> {
    const running = this.entries.get(id);
    if (running?.running) running.asked = 'cancel';
    else this.disarm(id);
  }

  private replace(job: ScheduledJob): void {
    this.disarm(job.id);
    const entry: Entry = { job, attemptsMade: 0, dueAt: job.runAt.getTime() };
    this.entries.set(job.id, entry);
    this.arm(entry);
  }

  handle(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
    for (const entry of this.entries.values()) if (entry.job.kind === kind) this.arm(entry);
  }

  async start(): Promise<void> {
    if (this.closed) throw new Error('scheduler is closed');
    this.started = true;
    for (const entry of this.entries.values()) this.arm(entry);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('scheduler is closed');
  }

  async counts(): Promise<JobCounts> {
    const counts = { waiting: 0, due: 0, running: 0, failed: this.failedCount };
    for (const entry of this.entries.values()) counts[this.stateOf(entry)]++;
    return counts;
  }

  async list(limit: number): Promise<ListedJob[]> {
    const held = [...this.entries.values()].map((entry): ListedJob => ({
      id: entry.job.id,
      kind: entry.job.kind,
      runAt: new Date(entry.dueAt),
      state: this.stateOf(entry),
      attemptsMade: entry.attemptsMade,
    }));
    return [...held, ...this.failed].sort((a, b) => a.runAt.getTime() - b.runAt.getTime()).slice(0, limit);
  }

  private stateOf(entry: Entry): 'waiting' | 'due' | 'running' {
    if (entry.running) return 'running';
    return entry.dueAt <= this.clock.now().getTime() ? 'due' : 'waiting';
  }

  /** Drops every pending job and waits for the handlers already running. */
  async close(): Promise<void> {
    this.closed = true;
    for (const id of [...this.entries.keys()]) this.disarm(id);
    await Promise.allSettled([...this.running]);
  }

  private disarm(id: string): void {
    const entry = this.entries.get(id);
    if (entry?.timer) clearTimeout(entry.timer);
    this.entries.delete(id);
  }

  /** Sets the entry's timer, if this process may run it now; a long wait is taken in steps. */
  private arm(entry: Entry): void {
    if (!this.started || this.closed || entry.timer || !this.handlers.has(entry.job.kind)) return;
    const delay = Math.max(0, entry.dueAt - this.clock.now().getTime());
    const step = Math.min(delay, MAX_TIMER_MS);
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (this.entries.get(entry.job.id) !== entry) return;
      if (step < delay) this.arm(entry);
      else this.track(this.run(entry));
    }, step);
    entry.timer.unref();
  }

  private track(run: Promise<void>): void {
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  private async run(entry: Entry): Promise<void> {
    const handler = this.handlers.get(entry.job.kind);
    if (!handler) return;
    entry.attemptsMade += 1;
    entry.running = true;
    try {
      await handler({ ...entry.job, data: { ...entry.job.data } });
      if (this.entries.get(entry.job.id) === entry) this.entries.delete(entry.job.id);
    } catch (error) {
      if (this.entries.get(entry.job.id) !== entry) return; // dropped by close meanwhile
      if (entry.attemptsMade >= this.attempts) {
        this.entries.delete(entry.job.id);
        this.keepFailed(entry, error);
        this.onFailed(entry.job, error);
        return;
      }
      entry.dueAt = this.clock.now().getTime() + this.backoffMs * 2 ** (entry.attemptsMade - 1);
      this.arm(entry);
    } finally {
      entry.running = false;
      const { asked } = entry;
      entry.asked = undefined;
      if (asked !== undefined && !this.closed) {
        // The run's retry, if it left one, gives way to what was asked meanwhile.
        if (this.entries.get(entry.job.id) === entry) this.disarm(entry.job.id);
        if (asked !== 'cancel') this.replace(asked);
      }
    }
  }

  private keepFailed(entry: Entry, error: unknown): void {
    this.failedCount++;
    if (this.failed.length >= FAILED_KEPT) this.failed.shift();
    this.failed.push({
      id: entry.job.id,
      kind: entry.job.kind,
      runAt: new Date(entry.dueAt),
      state: 'failed',
      attemptsMade: entry.attemptsMade,
      failedReason: error instanceof Error ? error.message : String(error),
    });
  }
}
