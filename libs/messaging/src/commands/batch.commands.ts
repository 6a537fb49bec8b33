import { AccountQueries } from '@deals/accounts';
import { CatalogQueries, effectiveStateAt } from '@deals/catalog';
import {
  Clock,
  EventStore,
  handleCommand,
  IdGenerator,
  LogPosition,
  NotFound,
  PartnerCaller,
  Scheduler,
  ValidationFailed,
} from '@deals/kernel';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Logger } from '@nestjs/common';
import { batchDayDecider } from '../domain/batch/batch-day.decider';
import { BatchMode, batchDayStream } from '../domain/batch/batch.events';
import { BatchDeal, dealAndTimeIssues, utcDay } from '../domain/batch/batch-rules';
import { BatchQueries } from '../queries/batch.queries';
import { deliveryJob } from './batch-delivery';

const logger = new Logger('Batches');

/** POST /v1/targeted_email/batches. */
export class ScheduleTargetedBatch extends Command<{ batchId: string; position: LogPosition | null }> {
  constructor(
    readonly dealId: string,
    readonly userIds: readonly string[],
    readonly mode: BatchMode,
    readonly sendAt: Date,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(ScheduleTargetedBatch)
export class ScheduleTargetedBatchHandler implements ICommandHandler<ScheduleTargetedBatch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly catalog: CatalogQueries,
    private readonly accounts: AccountQueries,
    private readonly scheduler: Scheduler,
  ) {}

  async execute({ dealId, userIds, mode, sendAt, caller }: ScheduleTargetedBatch) {
    const now = this.clock.now();
    const view = await this.catalog.deal(dealId);
    const deal: BatchDeal = view
      ? {
          found: true,
          state: effectiveStateAt(view.state, view.startAt!, view.endAt!, now.getTime()),
          startAt: view.startAt!,
          endAt: view.endAt!,
        }
      : { found: false };
    const issues = dealAndTimeIssues(deal, sendAt, now);
    // An id that names no live user of the partner is dropped; none left: "are all invalid".
    const unique = [...new Set(userIds)];
    const live = await Promise.all(unique.map((id) => this.accounts.user(caller.partnerId, id)));
    const valid = unique.filter((_, i) => live[i] !== null);
    if (!valid.length) issues.push({ type: 'invalid', resource: 'batch', field: 'user_ids', message: 'are all invalid' });
    if (issues.length) throw new ValidationFailed(issues);
    const batchId = this.ids.next();
    const sendDay = utcDay(sendAt);
    const { position } = await handleCommand(
      this.store,
      batchDayStream(caller.partnerId, sendDay),
      batchDayDecider,
      {
        type: 'ScheduleBatch',
        data: { batchId, partnerId: caller.partnerId, dealId, userIds: valid, mode, sendAt: sendAt.toISOString(), sendDay },
      },
      { now, metadata: caller },
    );
    // The job is for timeliness only: a scheduler that fails (Redis away) must not fail the call,
    // since the batch is scheduled; the start of a job-running process, and every hour, re-arm it.
    await this.scheduler
      .schedule(deliveryJob(batchId, caller.partnerId, sendDay, sendAt))
      .catch((error: Error) =>
        logger.warn(`batch ${batchId}: its delivery job was not armed (${error.message}); it is armed again within the hour`),
      );
    return { batchId, position };
  }
}

/** DELETE /v1/targeted_email/batches/:batch_id: pending → cancelled; its job does nothing when it fires. */
export class CancelTargetedBatch extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly batchId: string,
    readonly caller: PartnerCaller,
  ) {
    super();
  }
}

@CommandHandler(CancelTargetedBatch)
export class CancelTargetedBatchHandler implements ICommandHandler<CancelTargetedBatch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly batches: BatchQueries,
    private readonly scheduler: Scheduler,
  ) {}

  async execute({ batchId, caller }: CancelTargetedBatch) {
    const batch = await this.batches.batch(caller.partnerId, batchId);
    if (!batch) throw new NotFound('batch not found');
    const { position } = await handleCommand(
      this.store,
      batchDayStream(caller.partnerId, batch.sendDay),
      batchDayDecider,
      { type: 'CancelBatch', data: { batchId, partnerId: caller.partnerId } },
      { now: this.clock.now(), metadata: caller },
    );
    // A job left behind finds the batch cancelled and sends nothing.
    await this.scheduler
      .cancel(deliveryJob(batchId, caller.partnerId, batch.sendDay, new Date(batch.sendAt)).id)
      .catch((error: Error) => logger.warn(`batch ${batchId}: its delivery job was not removed (${error.message}); it will send nothing`));
    return { position };
  }
}
