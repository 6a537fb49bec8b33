import { assertJobId, Clock, JobCounts, JobHandler, KeyedMutex, ListedJob, ScheduledJob, Scheduler } from '@deals/kernel';
import { Job, JobsOptions, Processor, Queue, Worker, WorkerOptions } from 'bullmq';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';

export interface BullmqSchedulerOptions {
  /** `redis://host:port/db`. */
  url: string;
  /** BullMQ's key prefix, the same for every process sharing the queue (never ioredis `keyPrefix`). */
  prefix: string;
  queueName?: string;
  clock: Clock;
  /** Told of connection and worker errors. Default: the service log, one line per kind of error a minute. */
  onError?: (error: Error) => void;
  /** How long `start()` waits for Redis before it fails. Default 10 s. */
  startWaitMs?: number;
}

/** How long `close()` lets running handlers finish before it drops the worker's connections. */
const CLOSE_DEADLINE_MS = 5000;
/** How long a call waits for the first connection before it fails (BullMQ alone would wait forever). */
const CONNECT_WAIT_MS = 2000;
/** How long a starting process waits for Redis before it gives up its start. */
const START_WAIT_MS = 10_000;

/**
 * Errors to the service log as one JSON line each, a given message at most once a minute: with
 * Redis away, BullMQ reports the same refused connection several times a second.
 */
function throttledLog(logger: Logger): (error: Error) => void {
  const lastSaid = new Map<string, number>();
  return (error) => {
    const now = Date.now();
    if (now - (lastSaid.get(error.message) ?? -Infinity) < 60_000) return;
    if (lastSaid.size > 100) lastSaid.clear();
    lastSaid.set(error.message, now);
    logger.warn(`scheduler (bullmq): ${error.message}`);
  };
}

/** The URL with any password hidden, for messages. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * For our own clients: BullMQ reports their errors through the queue's or worker's 'error', and
 * this listener only stops ioredis printing "Unhandled error event" once BullMQ has let go.
 */
const ignore = () => undefined;

const JOB_OPTIONS: JobsOptions = {
  removeOnComplete: true, // a kept job would block its id for good
  removeOnFail: 1000,
  attempts: 3,
  backoff: { type: 'exponential', delay: 500 },
};

/**
 * Jobs a process runs at once (BullMQ's default is one): a long job (a bulk job's chunk, a delivery
 * waiting on a slow endpoint) does not hold back the holds, expiries and deliveries due meanwhile,
 * as the embedded scheduler's timers do not.
 */
const JOBS_AT_ONCE = 8;

const BULLMQ_STATES = { delayed: 'waiting', waiting: 'due', active: 'running', failed: 'failed' } as const;

/**
 * The distributed Scheduler: one BullMQ queue on Redis, one delayed job per `ScheduledJob`, named
 * after its kind. Every process may arm and cancel; only a process that registered handlers and
 * called `start()` runs a Worker, and such a process must handle every kind armed on the queue
 * (a job of an unknown kind fails there and is retried, then kept among the failed).
 *
 * BullMQ ignores an `add` whose id it still holds, so `schedule` removes the id first (serialised
 * per id within a process; two processes arming one id at once may keep the earlier). Removal does
 * not reach a job that is running, so arming or cancelling the id of a job running in this process
 * (a handler re-arming its own id) is kept until BullMQ has moved that job out of `active`, then
 * done: the latest request wins, over a retry of the run too. Such a request lives in this process
 * only until then; one from another process for a running id is still lost (the handler re-checks
 * its time anyway). Calls made before Redis has first answered wait for it up to
 * {@link CONNECT_WAIT_MS}, then fail.
 */
export class BullmqScheduler extends Scheduler {
  readonly backend = 'bullmq';
  private readonly clock: Clock;
  private readonly url: string;
  private readonly prefix: string;
  private readonly queueName: string;
  private readonly onError: (error: Error) => void;
  /** Fails fast when Redis is down (no offline queue), so a request errs instead of hanging. */
  private readonly connection: Redis;
  private readonly queue: Queue;
  private readonly handlers = new Map<string, JobHandler>();
  /** Two arms of one id in this process must not interleave as remove, remove, add, add (ignored). */
  private readonly perId = new KeyedMutex();
  /** Ids of the jobs running in this process's worker, with what was asked of each id meanwhile. */
  private readonly runningHere = new Map<string, AskedWhileRunning>();
  private workerConnection?: Redis;
  private worker?: Worker;
  private closing?: Promise<void>;
  private readonly startWaitMs: number;

  constructor(options: BullmqSchedulerOptions) {
    super();
    this.clock = options.clock;
    this.url = options.url;
    this.prefix = options.prefix;
    this.queueName = options.queueName ?? 'scheduled-jobs';
    this.onError = options.onError ?? throttledLog(new Logger('Scheduler'));
    this.startWaitMs = options.startWaitMs ?? START_WAIT_MS;
    this.connection = new Redis(this.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    this.connection.on('error', ignore);
    this.queue = new Queue(this.queueName, { connection: this.connection, prefix: this.prefix });
    this.queue.on('error', this.onError);
  }

  async schedule(job: ScheduledJob): Promise<void> {
    assertJobId(job.id);
    await this.connected();
    await this.perId.run(job.id, async () => {
      if (this.runningHere.has(job.id)) this.runningHere.set(job.id, { ...job, data: { ...job.data } });
      else await this.arm(job);
    });
  }

  async cancel(id: string): Promise<void> {
    assertJobId(id);
    await this.connected();
    await this.perId.run(id, async () => {
      if (this.runningHere.has(id)) this.runningHere.set(id, 'cancel');
      await this.queue.remove(id);
    });
  }

  handle(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  async start(): Promise<void> {
    if (this.worker || this.handlers.size === 0) return;
    // A process that runs jobs does not start without Redis: its Worker would wait for it forever
    // (and the API with it, never listening), printing a connection error several times a second.
    await this.connected(this.startWaitMs).catch(() => {
      throw new Error(
        `REDIS_URL: Redis at ${redactedUrl(this.url)} did not answer within ${this.startWaitMs / 1000} s; the scheduler cannot start`,
      );
    });
    // A Worker needs maxRetriesPerRequest null; given an instance without it, it throws.
    // The Worker only copies it (duplicate()) for the connections it owns.
    this.workerConnection = new Redis(this.url, { maxRetriesPerRequest: null });
    this.workerConnection.on('error', ignore);
    this.worker = new AttemptsWorker(
      this.queueName,
      (job: Job) => this.dispatch(job),
      { connection: this.workerConnection, prefix: this.prefix, concurrency: JOBS_AT_ONCE },
      { started: (id) => this.runningHere.set(id, undefined), ended: (id) => this.ranHere(id) },
    );
    this.worker.on('error', this.onError);
    await this.worker.waitUntilReady();
  }

  async ping(): Promise<void> {
    await this.connected();
    await this.connection.ping();
  }

  async counts(): Promise<JobCounts> {
    await this.connected();
    const counts = await this.queue.getJobCounts('delayed', 'waiting', 'prioritized', 'active', 'failed');
    return { waiting: counts.delayed, due: counts.waiting + counts.prioritized, running: counts.active, failed: counts.failed };
  }

  async list(limit: number): Promise<ListedJob[]> {
    await this.connected();
    const listed = await Promise.all(
      (['delayed', 'waiting', 'active', 'failed'] as const).map(async (type) =>
        (await this.queue.getJobs([type], 0, limit - 1, true)).map((job): ListedJob => ({
          id: String(job.id),
          kind: job.name,
          runAt: new Date(job.timestamp + (job.opts.delay ?? 0)),
          state: BULLMQ_STATES[type],
          attemptsMade: job.attemptsMade,
          ...(job.failedReason ? { failedReason: job.failedReason } : {}),
        })),
      ),
    );
    return listed
      .flat()
      .sort((a, b) => a.runAt.getTime() - b.runAt.getTime())
      .slice(0, limit);
  }

  /** The queue itself, for the operators' board (/admin/queues). */
  get boardQueue(): Queue {
    return this.queue;
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  /** Caller holds the id's lock. */
  private async arm(job: ScheduledJob): Promise<void> {
    await this.queue.remove(job.id); // its result says nothing: 1 also for an id it never held
    const delay = Math.max(0, job.runAt.getTime() - this.clock.now().getTime());
    await this.queue.add(job.kind, job.data, { ...JOB_OPTIONS, jobId: job.id, delay });
  }

  /** A run here has left `active`: does what was asked of its id meanwhile (removing a retry the run left). */
  private async ranHere(id: string): Promise<void> {
    try {
      await this.perId.run(id, async () => {
        const asked = this.runningHere.get(id);
        this.runningHere.delete(id);
        if (asked === 'cancel') await this.queue.remove(id);
        else if (asked) await this.arm(asked);
      });
    } catch (error) {
      this.onError(new Error(`job ${id} was not armed again after its run: ${(error as Error).message}`));
    }
  }

  private async dispatch(job: Job): Promise<void> {
    const handler = this.handlers.get(job.name);
    if (!handler) throw new Error(`no handler for scheduled job kind ${JSON.stringify(job.name)}`);
    await handler({
      id: job.id as string,
      kind: job.name,
      runAt: new Date(job.timestamp + (job.opts.delay ?? 0)),
      data: job.data,
    });
  }

  private async shutDown(): Promise<void> {
    if (this.worker) await this.closeWorker(this.worker);
    await this.queue.close();
    // Both are ours: BullMQ closes only the connections it created (the worker's duplicates).
    await quit(this.connection);
    if (this.workerConnection) await quit(this.workerConnection);
  }

  /**
   * Lets running handlers finish, up to a deadline: `worker.close()` has none of its own, and waits
   * forever for a QUIT while Redis is away. Past the deadline the worker's connections are dropped;
   * a running job's lock then lapses, and a worker retries it.
   */
  private async closeWorker(worker: Worker): Promise<void> {
    if (await settlesWithin(worker.close(), CLOSE_DEADLINE_MS)) return;
    this.onError(new Error(`scheduler (bullmq): worker not closed after ${CLOSE_DEADLINE_MS} ms`));
    // With Redis gone, ioredis never says 'end' and this never settles; the sockets are shut anyway.
    await settlesWithin(worker.disconnect(), 1000);
  }

  /** Until Redis first answers, BullMQ holds every call; this makes the caller wait a bounded time. */
  private connected(waitMs = CONNECT_WAIT_MS): Promise<void> {
    if (this.connection.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error('redis is not reachable')), waitMs);
      const onReady = () => done();
      const done = (error?: Error) => {
        clearTimeout(timer);
        this.connection.off('ready', onReady);
        if (error) reject(error);
        else resolve();
      };
      this.connection.on('ready', onReady);
    });
  }
}

/** What was asked of a running job's id: armed again (the latest request), cancelled, or nothing. */
type AskedWhileRunning = ScheduledJob | 'cancel' | undefined;

/**
 * A Worker that reports each attempt from before it starts until BullMQ has moved the job out of
 * `active` (removed as completed, delayed for a retry, or failed), when an add of its id counts again.
 */
class AttemptsWorker extends Worker {
  constructor(
    name: string,
    processor: Processor,
    options: WorkerOptions,
    private readonly onAttempt: { started(id: string): void; ended(id: string): Promise<void> },
  ) {
    super(name, processor, options);
  }

  override async processJob(job: Job, token: string, fetchNextCallback?: () => boolean): Promise<void | Job> {
    const id = String(job.id);
    this.onAttempt.started(id);
    try {
      return await super.processJob(job, token, fetchNextCallback);
    } finally {
      await this.onAttempt.ended(id);
    }
  }
}

/** Whether the promise settled (either way) within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = promise.then(
    () => true,
    () => true,
  );
  const outcome = await Promise.race([settled, late]);
  clearTimeout(timer);
  return outcome;
}

/** QUIT when connected; otherwise drop the socket, since a QUIT would wait for Redis to return. */
async function quit(connection: Redis): Promise<void> {
  if (connection.status !== 'ready') return connection.disconnect();
  try {
    await connection.quit();
  } catch {
    connection.disconnect();
  }
}
