import { Clock, currentTestClock, inTestClock, keepsTimeOf, Scheduler, TestClockRunner, ViewStore } from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { ExpireCoupon, ExpireCouponHandler } from '../commands/expire-coupon/expire-coupon.command';
import { couponsDueForExpiry, ExpiryCursor } from '../queries/coupons-due-for-expiry';

/** The sweep's job: its kind and its one id. */
export const EXPIRE_COUPONS_JOB = 'expire-coupons';
const PAGE_SIZE = 500;

/** How often the expiry sweep runs (`COUPON_EXPIRY_SWEEP_MS`, 10 minutes by default). */
export abstract class CouponExpirySettings {
  abstract readonly sweepMs: number;
}

/** What one sweep did: coupons the view showed due, and expiries it recorded (fewer when another recorded them first). */
export interface ExpirySweep {
  found: number;
  recorded: number;
  failed: number;
}

/**
 * Records the expiry of coupons (`CouponExpired`) within one sweep interval of it: a job that finds
 * the coupons past their expiry and not yet recorded, redeemed or cancelled, records each, and arms
 * the next. A job-running process arms it to run at once when it starts, so expiries passed while
 * the service was down are recorded then. The coupon was `expired` by the clock already: the record
 * is for the projections (the partner feed of issue 37), never what decides the state. One id for
 * every run: arming it at a start replaces the sweep armed before, so there is only ever one. The
 * handler is called, not the command bus: the first sweep runs while the application starts,
 * before the bus knows its handlers.
 */
@Injectable()
export class ExpireCoupons {
  private readonly logger = new Logger('CouponExpiry');

  constructor(
    private readonly scheduler: Scheduler,
    private readonly expiries: ExpireCouponHandler,
    private readonly views: ViewStore,
    private readonly clock: Clock,
    private readonly settings: CouponExpirySettings,
    runner: TestClockRunner,
  ) {
    this.scheduler.handle(EXPIRE_COUPONS_JOB, async () => {
      try {
        await this.sweep();
      } finally {
        // A test clock sweeps its own world at the end of each advance, armed by nothing.
        if (!currentTestClock()) await this.arm(this.clock.now().getTime() + this.settings.sweepMs);
      }
    });
    runner.sweepAtEachAdvance(EXPIRE_COUPONS_JOB);
  }

  /** Called by the process that runs jobs once its views are caught up: the first sweep runs at once. */
  async rearm(): Promise<void> {
    await this.arm(this.clock.now().getTime());
  }

  /** Records every expiry due at this moment, page by page; a coupon that fails is logged and left to the next sweep. */
  async sweep(): Promise<ExpirySweep> {
    const now = this.clock.now().getTime();
    const outcome: ExpirySweep = { found: 0, recorded: 0, failed: 0 };
    // A test clock's sweep reads its own world's coupons only.
    const world = currentTestClock()?.partnerId;
    for (let after: ExpiryCursor | null = null; ;) {
      const page = await couponsDueForExpiry(this.views, now, after, PAGE_SIZE, world);
      for (const coupon of page) {
        // Each test clock's coupons expire in its own time, as it advances; the sweep keeps the rest.
        if (!keepsTimeOf(coupon.partnerId)) continue;
        outcome.found++;
        try {
          const expire = () => this.expiries.execute(new ExpireCoupon(coupon._id, coupon.partnerId));
          // Under a test clock, each expiry is recorded at its own instant, as if time had passed it.
          const clock = currentTestClock();
          const { recorded } = await (clock ? inTestClock({ ...clock, at: new Date(coupon.expiresAt as number) }, expire) : expire());
          if (recorded) outcome.recorded++;
        } catch (error) {
          outcome.failed++;
          this.logger.error(
            { err: error, couponId: coupon._id },
            `coupon ${coupon._id}: its expiry was not recorded; the next sweep tries again`,
          );
        }
      }
      if (page.length < PAGE_SIZE) break;
      const last = page[page.length - 1];
      after = { expiresAt: last.expiresAt as number, id: last._id };
    }
    if (outcome.found > 0) this.logger.log(`expiry sweep: ${outcome.recorded} recorded of ${outcome.found} due, ${outcome.failed} failed`);
    return outcome;
  }

  private arm(at: number): Promise<void> {
    return this.scheduler.schedule({ id: EXPIRE_COUPONS_JOB, kind: EXPIRE_COUPONS_JOB, runAt: new Date(at), data: {} });
  }
}
