import { ScheduledJob, Scheduler } from '@deals/kernel';
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
/** Generous: BullMQ promises "not before", and a loaded CI machine can be slow. */
const WAIT_MS = 5000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, done: () => boolean, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

const id = (kind: string) => `${kind}-${randomUUID()}`;
const at = (msFromNow: number) => new Date(Date.now() + msFromNow);

/**
 * What every Scheduler adapter promises (ports/scheduler.port.ts). The adapter under test must be
 * given a `SystemClock`: delays are real, short (100–800 ms), and outcomes are awaited by polling.
 * "Does not run" is checked by waiting a while past the time a run would have happened.
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

    it('runs a job armed twice under one id once, at the later time, with the later data', async () => {
      record('send-batch');
      await scheduler.start();
      const jobId = id('send-batch');
      await scheduler.schedule({ id: jobId, kind: 'send-batch', runAt: at(150), data: { n: 1 } });
      const rearmedAt = Date.now();
      await scheduler.schedule({ id: jobId, kind: 'send-batch', runAt: at(700), data: { n: 2 } });

      await waitFor('the re-armed job to run', () => runsOf(jobId).length > 0);
      expect(runsOf(jobId)[0].at - rearmedAt).toBeGreaterThanOrEqual(650);
      expect(runsOf(jobId)[0].job.data).toEqual({ n: 2 });
      await sleep(400);
      expect(runsOf(jobId)).toHaveLength(1);
    });

    it('does not run a cancelled job', async () => {
      record('release-hold');
      await scheduler.start();
      const cancelled = id('release-hold');
      const kept = id('release-hold');
      await scheduler.schedule({ id: cancelled, kind: 'release-hold', runAt: at(200), data: {} });
      await scheduler.schedule({ id: kept, kind: 'release-hold', runAt: at(400), data: {} });
      await scheduler.cancel(cancelled);

      await waitFor('the other job to run', () => runsOf(kept).length > 0);
      await sleep(200);
      expect(runsOf(cancelled)).toHaveLength(0);
    });

    it('runs a job whose time has already passed promptly', async () => {
      record('release-hold');
      await scheduler.start();
      const jobId = id('release-hold');
      const armedAt = Date.now();
      await scheduler.schedule({ id: jobId, kind: 'release-hold', runAt: at(-60_000), data: {} });

      await waitFor('the overdue job to run', () => runsOf(jobId).length > 0, 2000);
      expect(runsOf(jobId)[0].at - armedAt).toBeLessThan(1000);
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
      await sleep(300);
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
      await sleep(200);
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
  });
}
