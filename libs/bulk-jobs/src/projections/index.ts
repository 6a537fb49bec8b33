import type { Projection } from '@deals/kernel';
import { bulkJobItemsProjection } from './bulk-job-items/bulk-job-items.projection';
import { bulkJobsProjection } from './bulk-jobs/bulk-jobs.projection';

/** Every projection the bulk jobs own; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const bulkJobProjections = [bulkJobsProjection, bulkJobItemsProjection] as Projection[];
export { bulkJobsProjection, bulkJobItemsProjection };
export type { BulkJobView } from './bulk-jobs/bulk-jobs.projection';
export type { BulkJobItemView } from './bulk-job-items/bulk-job-items.projection';
