import { AccountsModule } from '@deals/accounts';
import { CatalogModule } from '@deals/catalog';
import { Module } from '@nestjs/common';
import { BatchDelivery } from './commands/batch-delivery';
import { CancelTargetedBatchHandler, ScheduleTargetedBatchHandler } from './commands/batch.commands';
import { DealSummaries } from './email/deal-summaries';
import { BatchesController } from './http/batches.controller';
import { BatchQueries } from './queries/batch.queries';
import { DeliverDueBatches } from './reactions/deliver-due-batches.reaction';

/** Targeted-email batches and the daily regional email: commands, delivery, jobs and queries. */
@Module({
  imports: [CatalogModule, AccountsModule],
  providers: [ScheduleTargetedBatchHandler, CancelTargetedBatchHandler, BatchDelivery, DealSummaries, BatchQueries, DeliverDueBatches],
  exports: [BatchQueries, BatchDelivery, DeliverDueBatches],
})
export class MessagingModule {}

/** Messaging's HTTP routes. */
@Module({
  imports: [MessagingModule, CatalogModule],
  controllers: [BatchesController],
})
export class MessagingHttpModule {}
