import {
  Clock,
  currentTestClock,
  EventStore,
  handleCommand,
  inTestClock,
  JobCounts,
  JobHandler,
  ListedJob,
  loadCachedAggregate,
  nextDueJob,
  Scheduler,
  ScheduledJob,
  TestClockCommand,
  TestClockRunner,
  testClockDecider,
  testClockStream,
  underTestClock,
} from '@deals/kernel';
import { Logger } from '@nestjs/common';

/** The job that carries a clock's advance out in a process that runs jobs. */
export const ADVANCE_TEST_CLOCK_JOB = 'advance-test-clock';
/**
 * Runs of a clock's job in all before it is recorded failed, and the real wait before the first
 * retry (doubling for each later one): a job failing in real time is tried again as often.
 */
const JOB_RUNS = 3;
const RETRY_BACKOFF_MS = 500;
/** How long after an advance stopped by a failure it is tried again. */
const ADVANCE_RETRY_MS = 5_000;

/**
 * The service's scheduler, which keeps the jobs armed under a test clock on that clock's stream
 * instead of handing them to the real one (`inner`): they wait for the clock, not for time. An
 * advance runs them in the order of their due times, each in the clock's time at its instant, with
 * the handlers the process registered; jobs they arm under the clock join the same run.
 */
export class TestClockAgenda extends Scheduler implements TestClockRunner {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly logger = new Logger('TestClocks');
  private readonly advancing = new Set<string>();
  private readonly sweeps: string[] = [];
  /** Advances under way in this process, awaited by `close`. */
  private readonly running = new Set<Promise<void>>();
  private closing = false;

  constructor(
    private readonly inner: Scheduler,
    private readonly store: EventStore,
    /** Real time, for the clock's own records. */
    private readonly realClock: Clock,
  ) {
    super();
    // The job only starts the run: a long advance must not hold the slot other jobs run in.
    this.inner.handle(ADVANCE_TEST_CLOCK_JOB, async (job) => this.advanceInBackground(String(job.data.clockId)));
  }

  /** The scheduler the jobs of real time go to. */
  get real(): Scheduler {
    return this.inner;
  }

  get backend(): string {
    return this.inner.backend;
  }

  async schedule(job: ScheduledJob): Promise<void> {
    const clock = currentTestClock();
    if (!clock) return this.inner.schedule(job);
    await this.onClock(clock.clockId, { type: 'ArmClockJob', data: { clockId: clock.clockId, job } });
  }

  async cancel(id: string): Promise<void> {
    const clock = currentTestClock();
    if (!clock) return this.inner.cancel(id);
    await this.onClock(clock.clockId, { type: 'CancelClockJob', data: { clockId: clock.clockId, jobId: id } });
  }

  handle(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
    this.inner.handle(kind, handler);
  }

  /**
   * Has a process that runs jobs carry out the clock's advance to `to` (now, in real time, whatever
   * clock the caller keeps). One job id an advance: a finished advance's job, still closing, must
   * not swallow the next.
   */
  advanceSoon(clockId: string, to: string): Promise<void> {
    return this.inner.schedule({
      id: `${ADVANCE_TEST_CLOCK_JOB}-${clockId}-${Date.parse(to)}`,
      kind: ADVANCE_TEST_CLOCK_JOB,
      runAt: new Date(0),
      data: { clockId },
    });
  }

  sweepAtEachAdvance(kind: string): void {
    if (!this.sweeps.includes(kind)) this.sweeps.push(kind);
  }

  /**
   * Runs the advance beside the job that asked for it; one that fails is asked for again a little
   * later (a stop leaves the clock advancing, and the next start asks again).
   */
  private advanceInBackground(clockId: string): void {
    const run = this.advance(clockId)
      .catch(async (error) => {
        this.logger.error(`test clock ${clockId}: its advance stopped (${String(error)}); tried again in ${ADVANCE_RETRY_MS} ms`);
        if (this.closing) return;
        await this.inner
          .schedule({
            id: `${ADVANCE_TEST_CLOCK_JOB}-${clockId}-again-${this.realClock.now().getTime()}`,
            kind: ADVANCE_TEST_CLOCK_JOB,
            runAt: new Date(this.realClock.now().getTime() + ADVANCE_RETRY_MS),
            data: { clockId },
          })
          .catch((again) => this.logger.error(`test clock ${clockId}: its advance is tried again at the next start: ${String(again)}`));
      })
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /**
   * Runs the clock's jobs due by the advance's end, one at a time in order, then its sweeps, then
   * marks the clock ready; a job armed meanwhile (by a sweep, or from outside the run) is run first.
   */
  async advance(clockId: string): Promise<void> {
    // One run of a clock at a time in a process; another process's run of it writes the same records.
    if (this.advancing.has(clockId)) return;
    this.advancing.add(clockId);
    let swept = false;
    try {
      // A stopping process leaves the rest to the next start (the clock stays advancing).
      while (!this.closing) {
        // The cached fold: each turn reads only what the last one wrote.
        const { state } = await loadCachedAggregate(this.store, testClockStream(clockId), testClockDecider);
        if (state.status !== 'advancing') return;
        const job = nextDueJob(state);
        if (!job && !swept) {
          await this.sweep(clockId, underTestClock(state.partnerId!, clockId), new Date(state.from!), new Date(state.target!));
          swept = true;
          continue;
        }
        // Ready, unless a job came due since the read: the next turn runs it.
        if (!job) {
          await this.onClock(clockId, { type: 'FinishClockAdvance', data: { clockId } });
          continue;
        }
        const at = new Date(Math.max(Date.parse(job.runAt), Date.parse(state.frozenTime!)));
        const handler = this.handlers.get(job.kind);
        let failed: string | undefined;
        for (let run = 1; run <= JOB_RUNS; run++) {
          try {
            if (!handler) throw new Error(`no handler of ${job.kind} jobs in this process`);
            const scope = { clockId, partnerId: underTestClock(state.partnerId!, clockId), at };
            await inTestClock(scope, () => handler({ id: job.id, kind: job.kind, runAt: new Date(job.runAt), data: job.data }));
            failed = undefined;
            break;
          } catch (error) {
            failed = error instanceof Error ? error.message : String(error);
            this.logger.warn(`test clock ${clockId}: job ${job.id} failed at ${at.toISOString()} (run ${run} of ${JOB_RUNS}): ${failed}`);
            if (run < JOB_RUNS) await new Promise((resolve) => setTimeout(resolve, RETRY_BACKOFF_MS * 2 ** (run - 1)));
          }
        }
        await this.onClock(clockId, {
          type: 'RecordClockJobRan',
          data: { clockId, jobId: job.id, seq: job.seq, at: at.toISOString(), ...(failed === undefined ? {} : { failed }) },
        });
      }
    } finally {
      this.advancing.delete(clockId);
    }
  }

  /** The sweeps, once each at the advance's end (a sweep is idempotent: a repeat after a stop records nothing twice). */
  private async sweep(clockId: string, partnerId: string, from: Date, at: Date): Promise<void> {
    for (const kind of this.sweeps) {
      const handler = this.handlers.get(kind);
      if (!handler) continue;
      try {
        await inTestClock({ clockId, partnerId, at }, () => handler({ id: kind, kind, runAt: at, data: { from: from.toISOString() } }));
      } catch (error) {
        this.logger.warn(`test clock ${clockId}: its ${kind} sweep failed at ${at.toISOString()}: ${String(error)}`);
      }
    }
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  counts(): Promise<JobCounts> {
    return this.inner.counts();
  }

  list(limit: number): Promise<ListedJob[]> {
    return this.inner.list(limit);
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.running]);
    return this.inner.close();
  }

  private async onClock(clockId: string, command: TestClockCommand): Promise<void> {
    // The clock's own records are written in real time: its stream says when, not the time it keeps.
    await handleCommand(this.store, testClockStream(clockId), testClockDecider, command, {
      now: this.realClock.now(),
      metadata: { actor: 'test-clock' },
    });
  }
}
