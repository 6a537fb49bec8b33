import { AccountsModule } from '@deals/accounts';
import { CatalogModule } from '@deals/catalog';
import { EngagementModule } from '@deals/engagement';
import { DailyDigest } from './commands/daily-digest';
import { DailyDigestJobs } from './reactions/daily-digest.reaction';
import { Module } from '@nestjs/common';
import { BatchDelivery } from './commands/batch-delivery';
import { CancelTargetedBatchHandler, ScheduleTargetedBatchHandler } from './commands/batch.commands';
import { DealSummaries } from './email/deal-summaries';
import { BatchesController } from './http/batches.controller';
import { BatchQueries } from './queries/batch.queries';
import { DeliverDueBatches } from './reactions/deliver-due-batches.reaction';
import { MailGifts } from './reactions/mail-gifts.reaction';
import { UserMail } from './sandbox-mail/user-mail';
import { SandboxMailQueries } from './queries/sandbox-mail.queries';
import { SandboxMailController } from './http/sandbox-mail.controller';

/** Targeted-email batches, the daily regional email and gifts' mail: commands, delivery, jobs and queries. */
@Module({
  imports: [CatalogModule, AccountsModule, EngagementModule],
  providers: [
    ScheduleTargetedBatchHandler,
    CancelTargetedBatchHandler,
    BatchDelivery,
    DealSummaries,
    BatchQueries,
    DeliverDueBatches,
    MailGifts,
    DailyDigest,
    DailyDigestJobs,
    UserMail,
    SandboxMailQueries,
  ],
  exports: [BatchQueries, BatchDelivery, DeliverDueBatches, DailyDigest, DailyDigestJobs, SandboxMailQueries],
})
export class MessagingModule {}

/** Messaging's HTTP routes. */
@Module({
  imports: [MessagingModule, CatalogModule],
  controllers: [BatchesController, SandboxMailController],
})
export class MessagingHttpModule {}
