import { Scheduler, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { RELEASE_HOLD_JOB, releaseHoldJobId } from '../commands/release-hold-job';
import { ReleaseExpiredHold } from '../commands/purchase.commands';
import { PURCHASE_DETAILS, PurchaseDetails } from '../projections/purchase-details/purchase-details.projection';

/**
 * Releases holds at their expiry through the scheduler, and re-arms the jobs of every reservation
 * still open when a job-running process starts (a job lost with a process is armed again; a hold
 * lapses by itself anyway).
 */
@Injectable()
export class ReleaseExpiredHolds {
  constructor(private readonly scheduler: Scheduler, private readonly commands: CommandBus, private readonly views: ViewStore) {
    this.scheduler.handle(RELEASE_HOLD_JOB, async (job) => {
      await this.commands.execute(new ReleaseExpiredHold(String(job.data.dealId), String(job.data.holdId)));
    });
  }

  /** Called by the process that runs jobs, once its views are defined and its scheduler started. */
  async rearm(): Promise<void> {
    const open = await this.views.find<PurchaseDetails>(PURCHASE_DETAILS, { fulfillmentState: 'reserved' });
    for (const purchase of open) {
      await this.scheduler.schedule({
        id: releaseHoldJobId(purchase._id), kind: RELEASE_HOLD_JOB, runAt: new Date(purchase.holdExpiresAt), data: { dealId: purchase.deal.dealId, holdId: purchase._id },
      });
    }
  }
}
