import { defineProjection, ViewDocument } from '@deals/kernel';
import type { BulkItemResult, BulkJobChunkProcessed, BulkJobKind } from '../../domain/bulk-job.events';

/** "What became of each item of job J?", and "which job did partner P's item of this reference?" */
export interface BulkJobItemView extends ViewDocument, BulkItemResult {
  jobId: string;
  partnerId: string;
  kind: BulkJobKind;
  /** Set on an item done here ({@link doneKey}): a later job's item of the same reference is already done. */
  done: string | null;
}

export const BULK_JOB_ITEMS = 'bulk_job_items';

/** What names an item done across a partner's jobs: its kind and the partner's reference. */
export const doneKey = (partnerId: string, kind: BulkJobKind, reference: string) => `${partnerId}\n${kind}\n${reference}`;

/** An item's document: its job and its place, zero-padded so that ids sort as the items do. */
export const bulkJobItemId = (jobId: string, index: number) => `${jobId}:${String(index).padStart(5, '0')}`;

export const bulkJobItemsProjection = defineProjection<BulkJobItemView>({
  name: BULK_JOB_ITEMS,
  handles: ['BulkJobChunkProcessed'],
  indexes: [{ keys: { jobId: 1 } }, { keys: { done: 1 } }],
  documentIds: (event) => {
    const { jobId, results } = (event as unknown as BulkJobChunkProcessed).data;
    return results.map((result) => bulkJobItemId(jobId, result.index));
  },
  evolve(_view, recorded, id) {
    const { jobId, partnerId, kind, results } = (recorded as unknown as BulkJobChunkProcessed).data;
    const index = Number(id.slice(id.lastIndexOf(':') + 1));
    const result =
      results[index - results[0].index]?.index === index ? results[index - results[0].index] : results.find((r) => r.index === index);
    if (!result) return null;
    const { reference, status, resourceId, doneBy, error } = result;
    const done = status === 'succeeded' || status === 'matched' ? doneKey(partnerId, kind, reference) : null;
    return { _id: id, _pos: recorded.position, jobId, partnerId, kind, index, reference, status, resourceId, doneBy, error, done };
  },
});
