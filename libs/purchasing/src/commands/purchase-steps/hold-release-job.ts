import { Scheduler } from '@deals/kernel';
import { Logger } from '@nestjs/common';

/** The scheduled job that releases a hold at its expiry. */
export const RELEASE_HOLD_JOB = 'release-hold';
export const releaseHoldJobId = (holdId: string) => `release-hold-${holdId}`;

const logger = new Logger('HoldJobs');

/**
 * Arms the release of a hold at its expiry. The job is only for timeliness (an expired hold stops
 * counting whether or not it runs, and a restart re-arms the jobs of open reservations), so a
 * scheduler that fails (Redis away) must not fail the purchase around it: the failure is logged.
 */
export async function armHoldRelease(scheduler: Scheduler, dealId: string, holdId: string, runAt: string): Promise<void> {
  try {
    await scheduler.schedule({ id: releaseHoldJobId(holdId), kind: RELEASE_HOLD_JOB, runAt: new Date(runAt), data: { dealId, holdId } });
  } catch (error) {
    logger.warn(`hold ${holdId}: its release job was not armed (${(error as Error).message}); it lapses by the clock`);
  }
}

/** Disarms it once the hold is sold or released; a job left behind finds nothing to release. */
export async function disarmHoldRelease(scheduler: Scheduler, holdId: string): Promise<void> {
  try {
    await scheduler.cancel(releaseHoldJobId(holdId));
  } catch (error) {
    logger.warn(`hold ${holdId}: its release job was not cancelled (${(error as Error).message}); it will find nothing to release`);
  }
}
