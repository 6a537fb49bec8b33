import { Clock, currentTestClock, inTestClock, keepsTimeOf, Scheduler, TestClockRunner } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { ReleaseExpiredHold, ReleaseExpiredHoldHandler } from '../commands/release-expired-hold/release-expired-hold.command';
import { HOLD_TTL_MS } from '../domain/inventory/inventory.events';
import { OpenHolds } from '../queries/open-holds';

/** The sweep's job: its kind and its one id. */
export const RELEASE_DUE_HOLDS_JOB = 'release-due-holds';
/** The job, one a hold, that released a hold at its expiry before the sweep: those still armed run. */
export const RELEASE_HOLD_JOB = 'release-hold';
/** How soon a sweep that failed is tried again. */
const RETRY_MS = 1_000;

/** What one sweep did: the holds it found past their expiry, those it released, and when the next one is due. */
export interface HoldSweep {
  due: number;
  released: number;
  failed: number;
  /** Epoch ms: the earliest expiry among the holds left open, or one hold's life from now when none is. */
  nextAt: number;
}

/**
 * Records the release of holds past their expiry, with no job armed or disarmed by a purchase: a
 * sweep reads the holds the inventories keep open, releases those due, and arms itself for the
 * earliest expiry left, or one hold's life ahead when none is (a hold taken after it expires no
 * sooner than that). One id for every run, so there is only ever one; a job-running process arms it
 * to run at once when it starts, so holds that lapsed while the service was down are released then.
 * The release is for the views and the feed: an expired hold stops counting by the clock whether or
 * not it is recorded. Under a test clock, each advance sweeps the clock's own world, each release at
 * its hold's instant. Jobs of the earlier design (one a hold, `release-hold`) still run. The handler
 * is called, not the command bus: the first sweep runs while the application starts, before the bus
 * knows its handlers.
 */
@Injectable()
export class ReleaseExpiredHolds {
  private readonly logger = new Logger('HoldExpiry');

  constructor(
    private readonly scheduler: Scheduler,
    private readonly releases: ReleaseExpiredHoldHandler,
    private readonly openHolds: OpenHolds,
    private readonly clock: Clock,
    runner: TestClockRunner,
  ) {
    this.scheduler.handle(RELEASE_DUE_HOLDS_JOB, async () => {
      let next = this.clock.now().getTime() + RETRY_MS;
      try {
        next = (await this.sweep()).nextAt;
      } finally {
        // A test clock sweeps its own world at the end of each advance, armed by nothing.
        if (!currentTestClock()) await this.arm(next);
      }
    });
    runner.sweepAtEachAdvance(RELEASE_DUE_HOLDS_JOB);
    this.scheduler.handle(RELEASE_HOLD_JOB, async (job) => {
      const partnerId = typeof job.data.partnerId === 'string' ? job.data.partnerId : null;
      await this.release(String(job.data.dealId), String(job.data.holdId), partnerId);
    });
  }

  /** Called by the process that runs jobs once its views are caught up: the first sweep runs at once. */
  async rearm(): Promise<void> {
    await this.arm(this.clock.now().getTime());
  }

  /** Releases every hold due at this moment; one that fails is logged and left to the next sweep, which comes soon. */
  async sweep(): Promise<HoldSweep> {
    const now = this.clock.now().getTime();
    const outcome: HoldSweep = { due: 0, released: 0, failed: 0, nextAt: now + HOLD_TTL_MS };
    const clock = currentTestClock();
    for (const { dealId, holdId, expiresAt, partnerId } of await this.openHolds.list()) {
      // Each test clock's holds lapse in its own time, as it advances; the live deals' in real time.
      if (!(partnerId === undefined ? !clock : keepsTimeOf(partnerId))) continue;
      if (expiresAt > now) {
        outcome.nextAt = Math.min(outcome.nextAt, expiresAt);
        continue;
      }
      outcome.due++;
      try {
        const release = () => this.release(dealId, holdId, partnerId ?? null);
        // Under a test clock, each release is recorded at its hold's instant, as if time had passed it.
        const liveUntil = await (clock ? inTestClock({ ...clock, at: new Date(expiresAt) }, release) : release());
        if (liveUntil === null) outcome.released++;
        else outcome.nextAt = Math.min(outcome.nextAt, liveUntil);
      } catch (error) {
        outcome.failed++;
        outcome.nextAt = Math.min(outcome.nextAt, now + RETRY_MS);
        this.logger.error({ err: error, holdId }, `hold ${holdId}: its release was not recorded; the next sweep tries again`);
      }
    }
    if (outcome.due > 0) this.logger.log(`hold sweep: ${outcome.released} released of ${outcome.due} due, ${outcome.failed} failed`);
    return outcome;
  }

  /** Records the hold's release; its expiry (epoch ms) when it is still live by this process's clock, so nothing was released. */
  private async release(dealId: string, holdId: string, partnerId: string | null): Promise<number | null> {
    return (await this.releases.execute(new ReleaseExpiredHold(dealId, holdId, partnerId))).liveUntil;
  }

  private arm(at: number): Promise<void> {
    return this.scheduler.schedule({ id: RELEASE_DUE_HOLDS_JOB, kind: RELEASE_DUE_HOLDS_JOB, runAt: new Date(at), data: {} });
  }
}
