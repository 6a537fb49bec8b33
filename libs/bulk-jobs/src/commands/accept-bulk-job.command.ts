import { Clock, CommandCaller, EventStore, handleCommands, IdGenerator, LogPosition } from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { bulkJobDecider, bulkJobQueueDecider } from '../domain/bulk-job.decider';
import { BulkJobKind, bulkJobQueueStream, bulkJobStream } from '../domain/bulk-job.events';
import { BulkJobRunner } from './bulk-job-runner';

type Caller = CommandCaller & { partnerId: string };

/** POST /v1/bulk_jobs: the job and its items kept, queued behind the partner's open jobs, armed when its turn comes. */
export class AcceptBulkJob extends Command<{ jobId: string; position: LogPosition | null }> {
  constructor(
    readonly kind: BulkJobKind,
    readonly items: Array<Record<string, unknown>>,
    readonly caller: Caller,
  ) {
    super();
  }
}

@CommandHandler(AcceptBulkJob)
export class AcceptBulkJobHandler implements ICommandHandler<AcceptBulkJob> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly runner: BulkJobRunner,
  ) {}

  async execute({ kind, items, caller }: AcceptBulkJob) {
    const jobId = `bj_${this.ids.short()}`;
    const { partnerId } = caller;
    const outcomes = await handleCommands(
      this.store,
      [
        {
          streamId: bulkJobQueueStream(partnerId),
          decider: bulkJobQueueDecider,
          command: { type: 'QueueBulkJob', data: { partnerId, jobId } },
        },
        {
          streamId: bulkJobStream(jobId),
          decider: bulkJobDecider,
          command: { type: 'AcceptBulkJob', data: { jobId, partnerId, kind, items } },
          freshStream: true,
        },
      ],
      { now: this.clock.now(), metadata: caller },
    );
    await this.runner.arm(jobId);
    return { jobId, position: outcomes[1].position };
  }
}
