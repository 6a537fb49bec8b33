import { AccountsModule } from '@deals/accounts';
import { CatalogModule } from '@deals/catalog';
import { EngagementModule } from '@deals/engagement';
import { PurchasingModule } from '@deals/purchasing';
import { Module } from '@nestjs/common';
import { AcceptBulkJobHandler } from './commands/accept-bulk-job.command';
import { BulkJobRunner } from './commands/bulk-job-runner';
import { CancelBulkJobHandler } from './commands/cancel-bulk-job.command';
import { BulkJobsController } from './http/bulk-jobs.controller';
import { BulkItems } from './items/bulk-items';
import { BulkJobQueries } from './queries/bulk-job.queries';
import { CancelRevokedKeyJobs } from './reactions/cancel-revoked-key-jobs.reaction';

/** Bulk jobs: accepted, run in the background through the other contexts' commands, read back. */
@Module({
  imports: [AccountsModule, EngagementModule, PurchasingModule],
  providers: [AcceptBulkJobHandler, CancelBulkJobHandler, BulkJobRunner, BulkItems, BulkJobQueries, CancelRevokedKeyJobs],
  exports: [BulkJobRunner, BulkJobQueries],
})
export class BulkJobsModule {}

/** Bulk jobs' HTTP routes. */
@Module({
  imports: [BulkJobsModule, CatalogModule],
  controllers: [BulkJobsController],
})
export class BulkJobsHttpModule {}
