import { Clock, Scheduler, testClockOf } from '@deals/kernel';

const ARM_BATCHES_JOB = 'arm-batches';
import { Injectable } from '@nestjs/common';
import { BatchDelivery, DELIVER_BATCH_JOB, deliveryJob } from '../commands/batch-delivery';
import { BatchQueries } from '../queries/batch.queries';
import { MailGifts } from './mail-gifts.reaction';

/**
 * Runs the delivery job of a batch at its `send_at`, and re-arms the job of every batch not yet
 * delivered (and of every gift's mail not yet sent, `MailGifts`) when a job-running process starts
 * and every hour: a batch due while the service was down is sent when it starts (its job is due at
 * once), and one that stopped half-way resumes.
 */
@Injectable()
export class DeliverDueBatches {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly delivery: BatchDelivery,
    private readonly batches: BatchQueries,
    private readonly clock: Clock,
    private readonly gifts: MailGifts,
  ) {
    this.scheduler.handle(DELIVER_BATCH_JOB, async (job) => {
      const run = await this.delivery.deliver(String(job.data.batchId), String(job.data.partnerId), String(job.data.sendDay));
      // A timer may fire a moment early (see ReleaseExpiredHolds): failing the run makes the scheduler try again shortly.
      if (run.outcome === 'early') throw new Error(`batch ${String(job.data.batchId)} is due at ${run.sendAt}: its job ran early`);
    });
    this.scheduler.handle(ARM_BATCHES_JOB, () => this.rearm());
  }

  /** Arms every undelivered batch's job and gift's mail, and this again in an hour (a job a failing scheduler lost is armed again). */
  async rearm(): Promise<void> {
    await this.gifts.rearm();
    for (const batch of await this.batches.undelivered())
      // A test clock's batches wait on its own stream for it to advance.
      if (testClockOf(batch.partnerId) === null)
        await this.scheduler.schedule(deliveryJob(batch._id, batch.partnerId, batch.sendDay, new Date(batch.sendAt)));
    await this.scheduler.schedule({
      id: ARM_BATCHES_JOB,
      kind: ARM_BATCHES_JOB,
      runAt: new Date(this.clock.now().getTime() + 3_600_000),
      data: {},
    });
  }
}
