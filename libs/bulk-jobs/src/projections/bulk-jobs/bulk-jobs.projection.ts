import { defineProjection, ViewDocument } from '@deals/kernel';
import { BulkItemCounts, BulkJobCancellationReason, BulkJobEvent, BulkJobKind, noCounts } from '../../domain/bulk-job.events';

/** "What of partner P's bulk job J is done?" */
export interface BulkJobView extends ViewDocument {
  partnerId: string;
  kind: BulkJobKind;
  /**
   * `queued` until its turn (an earlier job of the partner runs), `running`, then `completed`; or,
   * cancelled by the partner, `cancelling` while its chunk under way finishes, then `cancelled`.
   */
  status: BulkJobStatus;
  itemCount: number;
  processed: number;
  counts: BulkItemCounts;
  acceptedAt: string;
  startedAt: string | null;
  completedAt: string | null;
  cancelledAt: string | null;
  /** Why it was cancelled (absent: by the partner's call, or on views made before reasons were kept). */
  cancellationReason?: BulkJobCancellationReason;
  /** The API key that sent it (absent when not kept). */
  keyId?: string;
  /** Whether the key of its items is deleted (once completed). */
  itemsErased: boolean;
}

export const BULK_JOB_STATUSES = ['queued', 'running', 'cancelling', 'completed', 'cancelled'] as const;
export type BulkJobStatus = (typeof BULK_JOB_STATUSES)[number];
/** The statuses of a job not completed yet. */
export const OPEN_BULK_JOB_STATUSES: readonly BulkJobStatus[] = ['queued', 'running', 'cancelling'];
export const isOpenBulkJob = (job: Pick<BulkJobView, 'status'>) => OPEN_BULK_JOB_STATUSES.includes(job.status);

export const BULK_JOBS = 'bulk_jobs';

export const bulkJobsProjection = defineProjection<BulkJobView>({
  name: BULK_JOBS,
  handles: ['BulkJobAccepted', 'BulkJobStarted', 'BulkJobChunkProcessed', 'BulkJobCancelled', 'BulkJobCompleted', 'BulkJobItemsErased'],
  indexes: [{ keys: { partnerId: 1 } }, { keys: { status: 1 } }],
  documentIds: (event) => [(event.data as { jobId: string }).jobId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as BulkJobEvent;
    if (event.type === 'BulkJobAccepted') {
      const { partnerId, kind, itemCount, acceptedAt, keyId } = event.data;
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
        cancelledAt: null,
        itemsErased: false,
        ...(keyId === undefined ? {} : { keyId }),
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
      case 'BulkJobCancelled':
        return {
          ...view,
          status: 'cancelling',
          cancelledAt: event.data.cancelledAt,
          ...(event.data.reason === undefined ? {} : { cancellationReason: event.data.reason }),
        };
      case 'BulkJobCompleted':
        return { ...view, status: event.data.cancelled ? 'cancelled' : 'completed', completedAt: event.data.completedAt };
      case 'BulkJobItemsErased':
        return { ...view, itemsErased: true };
    }
    return null;
  },
});
