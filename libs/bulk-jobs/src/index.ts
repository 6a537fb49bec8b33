/** Bulk jobs: many items of one kind accepted at once, run in the background through the single calls' commands. */
export { BulkJobsHttpModule, BulkJobsModule } from './bulk-jobs.module';
export { BulkJobRunner } from './commands/bulk-job-runner';
export { CancelBulkJob } from './commands/cancel-bulk-job.command';
export { BulkJobCompletedAlready } from './domain/bulk-job.decider';
export { BulkJobQueries } from './queries/bulk-job.queries';
export { BULK_JOBS, isOpenBulkJob } from './projections/bulk-jobs/bulk-jobs.projection';
export { BULK_JOB_ITEMS } from './projections/bulk-job-items/bulk-job-items.projection';
export { bulkJobProjections } from './projections';
export { bulkResultsCsv, toBulkJob } from './http/bulk-jobs.answers';
export type { BulkJobView, BulkJobItemView } from './projections';
export { BULK_JOBS_PERSONAL_FIELDS } from './domain/bulk-job-personal-data';
export { BULK_BODY_LIMIT } from './http/bulk-jobs.controller';
