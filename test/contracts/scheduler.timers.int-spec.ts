import { SystemClock } from '@deals/kernel';
import { TimersScheduler } from '../../libs/adapters/src/scheduler/timers/timers-scheduler.adapter';
import { schedulerContract } from '../../libs/testing/src/contracts/scheduler.contract';

schedulerContract('in-process timers', async () => {
  const scheduler = new TimersScheduler(new SystemClock());
  return { scheduler, cleanup: () => scheduler.close() };
});
