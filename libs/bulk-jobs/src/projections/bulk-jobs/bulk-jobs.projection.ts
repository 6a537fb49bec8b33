import { defineProjection, ViewDocument } from '@deals/kernel';
import { BulkItemCounts, BulkJobEvent, BulkJobKind, noCounts } from '../../domain/bulk-job.events';

/** "What of partner P's bulk job J is done?" */
export interface BulkJobView extends ViewDocument {
  partnerId: string;
  kind: BulkJobKind;
  /** `queued` until its turn (an earlier job of the partner runs), `running`, then `completed`. */
  status: 'queued' | 'running' | 'completed';
  itemCount: number;
  processed: number;
  counts: BulkItemCounts;
  acceptedAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /** Whether the key of its items is deleted (once completed). */
  itemsErased: boolean;
}

export const BULK_JOBS = 'bulk_jobs';

export const bulkJobsProjection = defineProjection<BulkJobView>({
  name: BULK_JOBS,
  handles: ['BulkJobAccepted', 'BulkJobStarted', 'BulkJobChunkProcessed', 'BulkJobCompleted', 'BulkJobItemsErased'],
  indexes: [{ keys: { partnerId: 1 } }, { keys: { status: 1 } }],
  documentIds: (event) => [(event.data as { jobId: string }).jobId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as BulkJobEvent;
    if (event.type === 'BulkJobAccepted') {
      const { partnerId, kind, itemCount, acceptedAt } = event.data;
      return {
        _id: id,
        _pos: recorded.position,
        partnerId,
        kind,
        status: 'queued',
        itemCount,
        processed: 0,
        counts: noCounts(),
        acceptedAt,
        startedAt: null,
        completedAt: null,
        itemsErased: false,
      };
    }
    if (!view) return null;
    switch (event.type) {
      case 'BulkJobStarted':
        return { ...view, status: 'running', startedAt: event.data.startedAt };
      case 'BulkJobChunkProcessed': {
        const counts = { ...view.counts };
        for (const result of event.data.results) counts[result.status]++;
        return { ...view, processed: view.processed + event.data.results.length, counts };
      }
      case 'BulkJobCompleted':
        return { ...view, status: 'completed', completedAt: event.data.completedAt };
      case 'BulkJobItemsErased':
        return { ...view, itemsErased: true };
    }
    return null;
  },
});
