import {
  inTestClock,
  JobHandler,
  ManualClock,
  sandboxOf,
  ScheduledJob,
  Scheduler,
  TestClockAwareClock,
  TestClockRunner,
  underTestClock,
} from '@deals/kernel';
import { ReleaseExpiredHold, ReleaseExpiredHoldHandler } from '../commands/release-expired-hold/release-expired-hold.command';
import { HOLD_TTL_MS } from '../domain/inventory/inventory.events';
import type { OpenHold, OpenHolds } from '../queries/open-holds';
import { RELEASE_DUE_HOLDS_JOB, RELEASE_HOLD_JOB, ReleaseExpiredHolds } from './release-expired-holds.reaction';

const SANDBOX = sandboxOf('6f1c2b9e-0d4a-4c1e-9a57-3b8f2e1d7c40');
const WORLD = underTestClock(SANDBOX, 'clock1');
const T0 = Date.parse('2026-06-15T12:00:00Z');

/** The sweep over holds kept in memory; a release removes the hold, unless it is live by `liveUntil` or set to fail. */
function sweeper(open: OpenHold[]) {
  const manual = new ManualClock(new Date(T0));
  // The service's clock: a test clock's time under one, the manual clock's otherwise.
  const clock = new TestClockAwareClock(manual);
  const jobs = new Map<string, ScheduledJob>();
  const handlers = new Map<string, JobHandler>();
  const sweeps: string[] = [];
  const scheduler = {
    schedule: async (job: ScheduledJob) => void jobs.set(job.id, job),
    handle: (kind: string, handler: JobHandler) => void handlers.set(kind, handler),
  } as unknown as Scheduler;
  const runner = { sweepAtEachAdvance: (kind: string) => void sweeps.push(kind) } as unknown as TestClockRunner;
  const released: Array<{ holdId: string; partnerId: string | null; at: number }> = [];
  const failing = new Set<string>();
  const liveUntil = new Map<string, number>();
  const handler = {
    execute: async ({ holdId, partnerId }: ReleaseExpiredHold) => {
      if (failing.has(holdId)) throw new Error('the store is away');
      if (liveUntil.has(holdId)) return { position: null, liveUntil: liveUntil.get(holdId) };
      released.push({ holdId, partnerId, at: clock.now().getTime() });
      open.splice(
        open.findIndex((h) => h.holdId === holdId),
        1,
      );
      return { position: null, liveUntil: null };
    },
  } as unknown as ReleaseExpiredHoldHandler;
  const holds = { list: async () => [...open] } as unknown as OpenHolds;
  const reaction = new ReleaseExpiredHolds(scheduler, handler, holds, clock, runner);
  const run = () => handlers.get(RELEASE_DUE_HOLDS_JOB)!(jobs.get(RELEASE_DUE_HOLDS_JOB)!);
  return { reaction, clock: manual, jobs, handlers, sweeps, released, failing, liveUntil, run };
}

const hold = (holdId: string, minutes: number, partnerId?: string): OpenHold => ({
  dealId: 'spa',
  holdId,
  expiresAt: T0 + minutes * 60_000,
  ...(partnerId ? { partnerId } : {}),
});

describe('the sweep that releases holds past their expiry', () => {
  it('runs at once at a start, releases the holds due, and arms itself for the earliest expiry left', async () => {
    const s = sweeper([hold('a', -1), hold('b', 3), hold('c', 2, SANDBOX)]);
    await s.reaction.rearm();
    expect(s.jobs.get(RELEASE_DUE_HOLDS_JOB)).toMatchObject({ kind: RELEASE_DUE_HOLDS_JOB, runAt: new Date(T0) });
    await s.run();
    expect(s.released).toEqual([{ holdId: 'a', partnerId: null, at: T0 }]);
    expect(s.jobs.get(RELEASE_DUE_HOLDS_JOB)!.runAt).toEqual(new Date(T0 + 2 * 60_000));
    s.clock.advance(2 * 60_000);
    await s.run();
    expect(s.released.map((r) => [r.holdId, r.partnerId])).toEqual([
      ['a', null],
      ['c', SANDBOX],
    ]);
    expect(s.jobs.get(RELEASE_DUE_HOLDS_JOB)!.runAt).toEqual(new Date(T0 + 3 * 60_000));
  });

  it("arms itself one hold's life ahead when no hold is open: a hold taken since expires no sooner", async () => {
    const s = sweeper([]);
    await s.reaction.rearm();
    await s.run();
    expect(s.jobs.get(RELEASE_DUE_HOLDS_JOB)!.runAt).toEqual(new Date(T0 + HOLD_TTL_MS));
  });

  it('comes back at the expiry of a hold still live by its clock, and soon after a release that failed', async () => {
    const s = sweeper([hold('early', 0), hold('down', -1), hold('later', 4)]);
    s.liveUntil.set('early', T0 + 500);
    s.failing.add('down');
    await s.reaction.rearm();
    await s.run();
    expect(s.released).toEqual([]);
    expect(s.jobs.get(RELEASE_DUE_HOLDS_JOB)!.runAt).toEqual(new Date(T0 + 500));
    s.liveUntil.clear();
    s.failing.clear();
    s.clock.advance(1_000);
    await s.run();
    expect(s.released.map((r) => r.holdId)).toEqual(['early', 'down']);
    expect(s.jobs.get(RELEASE_DUE_HOLDS_JOB)!.runAt).toEqual(new Date(T0 + 4 * 60_000));
  });

  it("leaves a test clock's holds to its advances, where it releases only that world's, each at its own instant, arming nothing", async () => {
    const s = sweeper([hold('live', -1), hold('clocked', -2, WORLD)]);
    expect(s.sweeps).toEqual([RELEASE_DUE_HOLDS_JOB]);
    await s.reaction.rearm();
    await s.run();
    expect(s.released.map((r) => r.holdId)).toEqual(['live']);
    s.jobs.clear();
    // The clock's advance to 12:10 runs the sweep at its end.
    await inTestClock({ clockId: 'clock1', partnerId: WORLD, at: new Date(T0 + 10 * 60_000) }, () =>
      s.handlers.get(RELEASE_DUE_HOLDS_JOB)!({ id: RELEASE_DUE_HOLDS_JOB, kind: RELEASE_DUE_HOLDS_JOB, runAt: new Date(T0), data: {} }),
    );
    expect(s.released.at(-1)).toEqual({ holdId: 'clocked', partnerId: WORLD, at: T0 - 2 * 60_000 });
    expect(s.jobs.size).toBe(0);
  });

  it('still runs a job of one hold armed before the sweep, naming its partner', async () => {
    const s = sweeper([hold('old', -1, SANDBOX)]);
    await s.handlers.get(RELEASE_HOLD_JOB)!({
      id: 'release-hold-old',
      kind: RELEASE_HOLD_JOB,
      runAt: new Date(T0),
      data: { dealId: 'spa', holdId: 'old', partnerId: SANDBOX },
    });
    expect(s.released).toEqual([{ holdId: 'old', partnerId: SANDBOX, at: T0 }]);
  });
});
