import { Clock, EventStore, handleCommand, LogPosition, PartnerCaller } from '@deals/kernel';
import { Logger } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { bulkJobDecider } from '../domain/bulk-job.decider';
import { bulkJobStream } from '../domain/bulk-job.events';
import { BulkJobRunner } from './bulk-job-runner';

/** POST /v1/bulk_jobs/:id/cancel: no chunk of the job starts from now on; a job not started completes at once. */
export class CancelBulkJob extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly jobId: string,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(CancelBulkJob)
export class CancelBulkJobHandler implements ICommandHandler<CancelBulkJob> {
  private readonly logger = new Logger('BulkJobs');

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly runner: BulkJobRunner,
  ) {}

  async execute({ jobId, caller }: CancelBulkJob) {
    const { partnerId } = caller;
    const { position } = await handleCommand(
      this.store,
      bulkJobStream(jobId),
      bulkJobDecider,
      { type: 'CancelBulkJob', data: { jobId, partnerId } },
      { now: this.clock.now(), metadata: caller },
    );
    // Recorded: the queue and the next step follow now, or by the sweep or the next start if that fails.
    await this.runner
      .cancelled(jobId)
      .catch((error: unknown) => this.logger.warn(`bulk job ${jobId} cancelled, its queue not moved on yet: ${String(error)}`));
    return { position };
  }
}
