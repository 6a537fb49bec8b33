import { JobCounts, ScheduledJob, Scheduler } from '@deals/kernel';
import { randomUUID } from 'node:crypto';

export interface SchedulerUnderTest {
  scheduler: Scheduler;
  cleanup(): Promise<void>;
}

interface Run {
  job: ScheduledJob;
  /** The kind whose handler ran it. */
  handler: string;
  at: number;
}

const POLL_MS = 20;
/** How long a wait may take before it counts as hung: BullMQ promises "not before", never "by". */
const WAIT_MS = 20_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, done: () => boolean | Promise<boolean>, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

const id = (kind: string) => `${kind}-${randomUUID()}`;
const at = (msFromNow: number) => new Date(Date.now() + msFromNow);

/**
 * What every Scheduler adapter promises (ports/scheduler.port.ts). The adapter under test must be
 * given a `SystemClock`: delays are real, short (50 to 600 ms), and outcomes are awaited by polling.
 * "Does not run" is checked once the scheduler holds no job (none waiting, due, running or failed):
 * no run is left to come. Where a job must not run before something else is asked, it is armed for
 * a minute on, or before `start()`, so that no machine's pause lets it run first.
 */
export function schedulerContract(name: string, open: () => Promise<SchedulerUnderTest>): void {
  describe(`Scheduler contract: ${name}`, () => {
    let subject: SchedulerUnderTest;
    let scheduler: Scheduler;
    let runs: Run[];

    const record = (kind: string, before?: (job: ScheduledJob, attempt: number) => void) => {
      let attempt = 0;
      scheduler.handle(kind, async (job) => {
        attempt += 1;
        before?.(job, attempt);
        runs.push({ job, handler: kind, at: Date.now() });
      });
    };
    const runsOf = (jobId: string) => runs.filter((run) => run.job.id === jobId);
    const drained = () => waitFor('the scheduler to hold no job', async () => (await scheduler.list(100)).length === 0);

    beforeEach(async () => {
      runs = [];
      subject = await open();
      scheduler = subject.scheduler;
    });
    afterEach(async () => subject.cleanup());

    it('runs a due job with its id, kind and data, and answers ping', async () => {
      record('release-hold');
      await scheduler.start();
      await scheduler.ping();
      const job = { id: id('release-hold'), kind: 'release-hold', runAt: at(200), data: { holdId: 'h1', units: 3 } };
      const armedAt = Date.now();
      await scheduler.schedule(job);

      await waitFor('the job to run', () => runs.length > 0);
      expect(runs).toHaveLength(1);
      expect(runs[0].job).toMatchObject({ id: job.id, kind: 'release-hold', data: { holdId: 'h1', units: 3 } });
      expect(Math.abs(runs[0].job.runAt.getTime() - job.runAt.getTime())).toBeLessThan(100);
      expect(runs[0].at - armedAt).toBeGreaterThanOrEqual(190);
    });

    it("runs a job armed twice under one id once, at the latest arming's time, with its data", async () => {
      record('send-batch');
      await scheduler.start();
      const jobId = id('send-batch');
      // A minute on: the re-arming comes first on any machine; kept, it would still be held.
      await scheduler.schedule({ id: jobId, kind: 'send-batch', runAt: at(60_000), data: { n: 1 } });
      const rearmedAt = Date.now();
      await scheduler.schedule({ id: jobId, kind: 'send-batch', runAt: at(300), data: { n: 2 } });

      await waitFor('the re-armed job to run', () => runsOf(jobId).length > 0);
      expect(runsOf(jobId)[0].at - rearmedAt).toBeGreaterThanOrEqual(250);
      expect(runsOf(jobId)[0].job.data).toEqual({ n: 2 });
      await drained();
      expect(runsOf(jobId)).toHaveLength(1);
    });

    it('runs again, at the later time, a job whose handler arms its own id', async () => {
      // The hourly jobs that re-arm themselves (arm-batches, arm-digests) do this.
      scheduler.handle('arm-batches', async (job) => {
        runs.push({ job, handler: 'arm-batches', at: Date.now() });
        if (job.data.n === 1) await scheduler.schedule({ id: job.id, kind: 'arm-batches', runAt: at(600), data: { n: 2 } });
      });
      await scheduler.start();
      const jobId = id('arm-batches');
      await scheduler.schedule({ id: jobId, kind: 'arm-batches', runAt: at(100), data: { n: 1 } });

      await waitFor('the job to run again', () => runsOf(jobId).length >= 2);
      const [first, second] = runsOf(jobId);
      expect(second.job.data).toEqual({ n: 2 });
      expect(second.at - first.at).toBeGreaterThanOrEqual(550);
      await drained();
      expect(runsOf(jobId)).toHaveLength(2);
    });

    it('does not retry a run that armed its own id again and then threw: the later arming stands', async () => {
      scheduler.handle('arm-batches', async (job) => {
        runs.push({ job, handler: 'arm-batches', at: Date.now() });
        if (job.data.n !== 1) return;
        await scheduler.schedule({ id: job.id, kind: 'arm-batches', runAt: at(600), data: { n: 2 } });
        throw new Error('a batch could not be armed');
      });
      await scheduler.start();
      const jobId = id('arm-batches');
      await scheduler.schedule({ id: jobId, kind: 'arm-batches', runAt: at(100), data: { n: 1 } });

      await waitFor('the later arming to run', () => runsOf(jobId).some((run) => run.job.data.n === 2));
      await drained();
      expect(runsOf(jobId).map((run) => run.job.data.n)).toEqual([1, 2]);
    });

    it('does not run a cancelled job', async () => {
      record('release-hold');
      const cancelled = id('release-hold');
      const kept = id('release-hold');
      // Cancelled before the scheduler starts: it cannot have run first on any machine.
      await scheduler.schedule({ id: cancelled, kind: 'release-hold', runAt: at(100), data: {} });
      await scheduler.schedule({ id: kept, kind: 'release-hold', runAt: at(150), data: {} });
      await scheduler.cancel(cancelled);
      await scheduler.start();

      await waitFor('the other job to run', () => runsOf(kept).length > 0);
      await drained();
      expect(runsOf(cancelled)).toHaveLength(0);
    });

    it('runs a job whose time has already passed now, not as late as it is overdue', async () => {
      record('release-hold');
      await scheduler.start();
      const jobId = id('release-hold');
      // Overdue by more than a wait may take: run a minute on, it would outlast it.
      await scheduler.schedule({ id: jobId, kind: 'release-hold', runAt: at(-60_000), data: {} });

      await waitFor('the overdue job to run', () => runsOf(jobId).length > 0);
    });

    it('retries a handler that throws, and the retry succeeds', async () => {
      const attempts: number[] = [];
      record('send-batch', (_job, attempt) => {
        attempts.push(attempt);
        if (attempt === 1) throw new Error('the mail server is down');
      });
      await scheduler.start();
      const jobId = id('send-batch');
      await scheduler.schedule({ id: jobId, kind: 'send-batch', runAt: at(100), data: { batch: 'b1' } });

      await waitFor('the retry to succeed', () => runsOf(jobId).length > 0);
      expect(attempts).toEqual([1, 2]);
      expect(runsOf(jobId)[0].job.data).toEqual({ batch: 'b1' });
      await drained();
      expect(runsOf(jobId)).toHaveLength(1);
    });

    it('gives each job to the handler of its kind only', async () => {
      record('release-hold');
      record('send-batch');
      await scheduler.start();
      const hold = id('release-hold');
      const batch = id('send-batch');
      await scheduler.schedule({ id: hold, kind: 'release-hold', runAt: at(100), data: {} });
      await scheduler.schedule({ id: batch, kind: 'send-batch', runAt: at(150), data: {} });

      await waitFor('both jobs to run', () => runs.length >= 2);
      await drained();
      expect(runs.map((run) => [run.job.id, run.handler]).sort()).toEqual(
        [
          [hold, 'release-hold'],
          [batch, 'send-batch'],
        ].sort(),
      );
    });

    it('runs a job armed before start() once started', async () => {
      record('release-hold');
      const jobId = id('release-hold');
      await scheduler.schedule({ id: jobId, kind: 'release-hold', runAt: at(100), data: { early: true } });
      await sleep(300);
      expect(runs).toHaveLength(0);

      await scheduler.start();
      await waitFor('the early job to run', () => runsOf(jobId).length > 0);
      expect(runsOf(jobId)[0].job.data).toEqual({ early: true });
    });

    it('counts and lists its jobs: waiting, running, and failed after the last attempt', async () => {
      let release: () => void = () => undefined;
      const running = new Promise<void>((resolve) => (release = resolve));
      scheduler.handle('send-batch', () => running);
      scheduler.handle('release-hold', async () => {
        throw new Error('the mail server is down');
      });
      await scheduler.start();
      try {
        const later = id('send-batch');
        const busy = id('send-batch');
        const failing = id('release-hold');
        await scheduler.schedule({ id: later, kind: 'send-batch', runAt: at(60_000), data: {} });
        await scheduler.schedule({ id: failing, kind: 'release-hold', runAt: at(50), data: {} });
        const countsWhen = async (done: (counts: JobCounts) => boolean) => {
          const deadline = Date.now() + WAIT_MS;
          let counts = await scheduler.counts();
          while (!done(counts) && Date.now() < deadline) {
            await sleep(POLL_MS);
            counts = await scheduler.counts();
          }
          return counts;
        };
        await countsWhen((counts) => counts.failed === 1);
        // Then one that runs until released (BullMQ's worker runs one job at a time: it would hold up the retries).
        await scheduler.schedule({ id: busy, kind: 'send-batch', runAt: at(50), data: {} });
        const counts = await countsWhen((counts) => counts.running === 1);
        expect(counts).toEqual({ waiting: 1, due: 0, running: 1, failed: 1 });
        const listed = await scheduler.list(10);
        expect(listed.map((job) => [job.id, job.kind, job.state]).sort()).toEqual(
          [
            [busy, 'send-batch', 'running'],
            [failing, 'release-hold', 'failed'],
            [later, 'send-batch', 'waiting'],
          ].sort(),
        );
        // Soonest first: the one armed for a minute from now comes last.
        expect(listed[2].id).toBe(later);
        expect(listed.find((job) => job.id === failing)).toMatchObject({ attemptsMade: 3, failedReason: 'the mail server is down' });
      } finally {
        release();
      }
    });
  });
}
