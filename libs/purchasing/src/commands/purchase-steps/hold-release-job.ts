import { isSandbox, Scheduler } from '@deals/kernel';
import { Logger } from '@nestjs/common';

/** The scheduled job that releases a hold at its expiry. */
export const RELEASE_HOLD_JOB = 'release-hold';
export const releaseHoldJobId = (holdId: string) => `release-hold-${holdId}`;

/**
 * What a release job carries: the hold, and for a sandbox's hold the sandbox (its partner id),
 * whose own inventory of the deal holds it; a job without one is of the live deal's inventory.
 */
export const releaseHoldJobData = (dealId: string, holdId: string, partnerId?: string | null) =>
  isSandbox(partnerId) ? { dealId, holdId, partnerId } : { dealId, holdId };

const logger = new Logger('HoldJobs');

/**
 * Arms the release of a hold at its expiry (`partnerId`: the purchase's, whose inventory of the
 * deal holds it). The job is only for timeliness (an expired hold stops counting whether or not it
 * runs, and a restart re-arms the jobs of open reservations), so a scheduler that fails (Redis
 * away) must not fail the purchase around it: the failure is logged.
 */
export async function armHoldRelease(
  scheduler: Scheduler,
  dealId: string,
  holdId: string,
  runAt: string,
  partnerId?: string,
): Promise<void> {
  try {
    await scheduler.schedule({
      id: releaseHoldJobId(holdId),
      kind: RELEASE_HOLD_JOB,
      runAt: new Date(runAt),
      data: releaseHoldJobData(dealId, holdId, partnerId),
    });
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
