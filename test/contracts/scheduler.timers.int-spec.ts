import { SystemClock } from '@deals/kernel';
import { TimersScheduler } from '@deals/adapters/scheduler/timers/timers-scheduler.adapter';
import { schedulerContract } from '@deals/testing/contracts/scheduler.contract';

schedulerContract('in-process timers', async () => {
  const scheduler = new TimersScheduler(new SystemClock());
  return { scheduler, cleanup: () => scheduler.close() };
});
