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

  abstract close(): Promise<void>;
}
