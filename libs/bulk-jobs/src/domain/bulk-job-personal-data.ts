import type { PersonalFields } from '@deals/kernel';
import { bulkJobItemsOwner } from './bulk-job.events';

/**
 * A job's items are the partner's data about people (a users job's emails and names): sealed in
 * the log under a key of the job's own, deleted once the job completes; the results keep ids only.
 */
export const BULK_JOBS_PERSONAL_FIELDS: PersonalFields = new Map([
  [
    'BulkJobItemsAdded',
    {
      owner: (data) => (typeof data.jobId === 'string' ? bulkJobItemsOwner(data.jobId) : null),
      paths: [['items']],
      whenErased: 'drop' as const,
    },
  ],
]);
