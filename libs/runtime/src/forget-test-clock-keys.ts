import { Clock, currentTestClock, IdempotencyStore, Scheduler, TestClockRunner } from '@deals/kernel';
import { Injectable } from '@nestjs/common';

export const FORGET_TEST_CLOCK_KEYS_JOB = 'forget-test-clock-keys';

/**
 * Purges the idempotency keys of a test clock's world that expired by its time, at the end of each
 * of its advances: real time's purge leaves them alone (a clock standing in the past would lose its
 * keys at once, one ahead of real time keep them for good), and their share of the store frees up
 * as the clock moves.
 */
@Injectable()
export class ForgetTestClockKeys {
  constructor(scheduler: Scheduler, runner: TestClockRunner, store: IdempotencyStore, clock: Clock) {
    scheduler.handle(FORGET_TEST_CLOCK_KEYS_JOB, async () => {
      const world = currentTestClock();
      if (world) await store.purge(clock.now().getTime(), world.partnerId);
    });
    runner.sweepAtEachAdvance(FORGET_TEST_CLOCK_KEYS_JOB);
  }
}
