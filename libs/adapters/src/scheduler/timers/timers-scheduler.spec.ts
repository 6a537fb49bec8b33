import { ManualClock, ScheduledJob } from '@deals/kernel';
import { TimersScheduler } from './timers-scheduler.adapter';

/** The embedded scheduler's runs of one id, with the process's timers under the test's hand. */
describe('TimersScheduler: an id armed while its run is under way', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let scheduler: TimersScheduler;
  let runs: Array<{ n: unknown; phase: 'start' | 'end' }>;
  let release: () => void;

  beforeEach(async () => {
    jest.useFakeTimers();
    runs = [];
    scheduler = new TimersScheduler(clock, { attempts: 2, backoffMs: 500 });
    // The first run is held until the test lets it go; the others end at once.
    const held = new Promise<void>((resolve) => (release = resolve));
    scheduler.handle('run-bulk-chunk', async (job) => {
      runs.push({ n: job.data.n, phase: 'start' });
      if (job.data.n === 1) await held;
      runs.push({ n: job.data.n, phase: 'end' });
    });
    await scheduler.start();
  });
  afterEach(async () => {
    release();
    await scheduler.close();
    jest.useRealTimers();
  });

  const job = (n: number, inMs = 0): ScheduledJob => ({
    id: 'bulk-j1-0',
    kind: 'run-bulk-chunk',
    runAt: new Date(clock.now().getTime() + inMs),
    data: { n },
  });

  it('runs the later arming once the run under way has ended, never beside it', async () => {
    await scheduler.schedule(job(1));
    await jest.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([{ n: 1, phase: 'start' }]);
    await scheduler.schedule(job(2));
    await scheduler.schedule(job(3));
    await jest.advanceTimersByTimeAsync(60_000);
    expect(runs).toEqual([{ n: 1, phase: 'start' }]);
    expect((await scheduler.list(10)).map((listed) => listed.state)).toEqual(['running']);
    release();
    await jest.advanceTimersByTimeAsync(0);
    // The latest arming, once: the one in between was replaced by it.
    expect(runs.map(({ n, phase }) => `${String(n)} ${phase}`)).toEqual(['1 start', '1 end', '3 start', '3 end']);
    expect(await scheduler.list(10)).toEqual([]);
  });

  it('neither retries nor runs again a job cancelled while its run is under way', async () => {
    await scheduler.schedule(job(1));
    await jest.advanceTimersByTimeAsync(0);
    await scheduler.cancel('bulk-j1-0');
    release();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(runs.map(({ n, phase }) => `${String(n)} ${phase}`)).toEqual(['1 start', '1 end']);
    expect(await scheduler.list(10)).toEqual([]);
  });
});
