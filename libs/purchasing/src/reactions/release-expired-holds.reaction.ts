import { Scheduler, testClockOf } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { RELEASE_HOLD_JOB, releaseHoldJobData, releaseHoldJobId } from '../commands/purchase-steps/hold-release-job';
import { ReleaseExpiredHold } from '../commands/release-expired-hold/release-expired-hold.command';
import { OpenHolds } from '../queries/open-holds';

/**
 * Releases holds at their expiry through the scheduler, and re-arms the job of every hold still
 * open when a job-running process starts (a job lost with a process is armed again; a hold lapses
 * by itself anyway). The open holds are read from the inventory, not from purchases still
 * `reserved`: those include every reservation that ever lapsed, and miss a claim's `-r`
 * replacement hold, which no reserved purchase names.
 */
@Injectable()
export class ReleaseExpiredHolds {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly commands: CommandBus,
    private readonly openHolds: OpenHolds,
  ) {
    this.scheduler.handle(RELEASE_HOLD_JOB, async (job) => {
      // A job without a partner is of the live deal's inventory (see `releaseHoldJobData`).
      const partnerId = typeof job.data.partnerId === 'string' ? job.data.partnerId : null;
      const { liveUntil } = await this.commands.execute<ReleaseExpiredHold, { liveUntil: number | null }>(
        new ReleaseExpiredHold(String(job.data.dealId), String(job.data.holdId), partnerId),
      );
      // A timer may fire a moment before its time (Node measures it from the loop's cached clock,
      // late when the loop is busy): the hold, still live, was not released. Failing the run has
      // the scheduler try again after its back-off (500 ms, then 1 s), by when it has lapsed;
      // before, the job ended there and the hold stayed open until the next start.
      if (liveUntil !== null)
        throw new Error(`hold ${String(job.data.holdId)} is live until ${new Date(liveUntil).toISOString()}: its release job ran early`);
    });
  }

  /** Called by the process that runs jobs, once its views are defined and its scheduler started. */
  async rearm(): Promise<void> {
    for (const { dealId, holdId, expiresAt, partnerId } of await this.openHolds.list()) {
      // A test clock keeps its holds' jobs on its own stream, where none is lost, and runs them as it advances.
      if (partnerId && testClockOf(partnerId) !== null) continue;
      await this.scheduler.schedule({
        id: releaseHoldJobId(holdId),
        kind: RELEASE_HOLD_JOB,
        runAt: new Date(expiresAt),
        data: releaseHoldJobData(dealId, holdId, partnerId),
      });
    }
  }
}
