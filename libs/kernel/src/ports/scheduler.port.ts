/** A job is an ordinary command issued later; its id makes arming it idempotent. */
export interface ScheduledJob {
  /** Only letters, digits, `-` and `_`, and not all digits (BullMQ's rule): `release-hold-<holdId>`. */
  id: string;
  /** Which handler runs it, e.g. `release-hold`. */
  kind: string;
  runAt: Date;
  data: Record<string, unknown>;
}

export type JobHandler = (job: ScheduledJob) => Promise<void>;

/** Ids that every adapter accepts. */
export const JOB_ID_PATTERN = /^(?!-?[0-9]+$)[A-Za-z0-9_-]{1,200}$/;

export function assertJobId(id: string): void {
  if (!JOB_ID_PATTERN.test(id)) throw new Error(`invalid job id ${JSON.stringify(id)}`);
}

/** Where a job stands: armed for later, due (its time has come, no handler has it yet), running, or failed for good. */
export type JobState = 'waiting' | 'due' | 'running' | 'failed';

export interface JobCounts {
  waiting: number;
  due: number;
  running: number;
  /** Jobs that failed their last attempt (kept: BullMQ keeps the last 1,000; the timers count since the start). */
  failed: number;
}

/** A job as an operator sees it. */
export interface ListedJob {
  id: string;
  kind: string;
  runAt: Date;
  state: JobState;
  attemptsMade: number;
  /** The last attempt's error, for a failed one. */
  failedReason?: string;
}

/**
 * Delayed work: runs a job's handler at (or soon after) `runAt`.
 *
 * Promises: a job armed twice under one id runs once, at the time of the latest `schedule`;
 * a cancelled job does not run unless it had already started; a job whose handler throws is
 * retried a few times with back-off. Handlers must be idempotent and re-check that their time
 * has come: the scheduler is an optimisation of timeliness, never the source of truth.
 *
 * Leaves out: exact timing (a job may run late), ordering between jobs, results.
 */
export abstract class Scheduler {
  abstract readonly backend: string;

  abstract schedule(job: ScheduledJob): Promise<void>;

  abstract cancel(id: string): Promise<void>;

  /** Registers the handler of a kind. Only a process that registered handlers runs jobs. */
  abstract handle(kind: string, handler: JobHandler): void;

  /** Starts running due jobs with the registered handlers. */
  abstract start(): Promise<void>;

  abstract ping(): Promise<void>;

  /** How many jobs stand where (the service's metrics). */
  abstract counts(): Promise<JobCounts>;

  /** The jobs held, soonest first, up to `limit` (the operator's `jobs:list`). */
  abstract list(limit: number): Promise<ListedJob[]>;

  abstract close(): Promise<void>;
}
