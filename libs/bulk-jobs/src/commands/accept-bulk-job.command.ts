import { Clock, eachInSlices, EventStore, handleCommands, IdGenerator, LogPosition, PartnerCaller } from '@deals/kernel';
import { Logger } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { bulkJobDecider, bulkJobQueueDecider, itemBytes } from '../domain/bulk-job.decider';
import { BulkJobKind, bulkJobQueueStream, bulkJobStream } from '../domain/bulk-job.events';
import { BulkJobRunner } from './bulk-job-runner';

/** Items sized in one turn of the event loop: a job's 10,000 leave other requests their turns. */
const ITEMS_A_SLICE = 500;

/** POST /v1/bulk_jobs: the job and its items kept, queued behind the partner's open jobs, armed when its turn comes. */
export class AcceptBulkJob extends Command<{ jobId: string; position: LogPosition | null }> {
  constructor(
    readonly kind: BulkJobKind,
    readonly items: Array<Record<string, unknown>>,
    readonly caller: PartnerCaller,
    /** The partner's API key that sent the job: it is cancelled if that key is revoked. */
    readonly keyId?: string,
  ) {
    super();
  }
}

@CommandHandler(AcceptBulkJob)
export class AcceptBulkJobHandler implements ICommandHandler<AcceptBulkJob> {
  private readonly logger = new Logger('BulkJobs');

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly runner: BulkJobRunner,
  ) {}

  async execute({ kind, items, caller, keyId }: AcceptBulkJob) {
    const jobId = `bj_${this.ids.short()}`;
    const { partnerId } = caller;
    const sizes: number[] = [];
    await eachInSlices(items, ITEMS_A_SLICE, (item) => sizes.push(itemBytes(item)));
    const outcomes = await handleCommands(
      this.store,
      // The job's stream is the unit's lane, written first where a store writes stream by stream:
      // a queue never names a job that was not written.
      [
        {
          streamId: bulkJobStream(jobId),
          decider: bulkJobDecider,
          command: { type: 'AcceptBulkJob', data: { jobId, partnerId, kind, items, sizes, ...(keyId === undefined ? {} : { keyId }) } },
          freshStream: true,
          lane: true,
        },
        {
          streamId: bulkJobQueueStream(partnerId),
          decider: bulkJobQueueDecider,
          command: { type: 'QueueBulkJob', data: { partnerId, jobId } },
        },
      ],
      { now: this.clock.now(), metadata: caller },
    );
    // Accepted: armed now, or by the sweep or the next start if that fails.
    await this.runner.arm(jobId).catch((error: unknown) => this.logger.warn(`bulk job ${jobId} accepted, not armed yet: ${String(error)}`));
    return { jobId, position: outcomes[0].position };
  }
}
