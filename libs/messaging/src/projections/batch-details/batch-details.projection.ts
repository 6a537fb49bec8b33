import { defineProjection, ViewDocument } from '@deals/kernel';
import type { BatchDayEvent, BatchDeliveryEvent, BatchMode } from '../../domain/batch/batch.events';

/** "What is batch X, and which batches are due, or suppress a user's daily email that day?" */
export interface BatchDetails extends ViewDocument {
  partnerId: string;
  dealId: string;
  userIds: string[];
  mode: BatchMode;
  sendAt: string;
  sendDay: string;
  /** The answered `status`; a batch being sent is still `pending`. */
  status: 'pending' | 'processed' | 'failed' | 'cancelled';
  sending: boolean;
  sent: number;
  failed: number;
  skipped: number;
  createdAt: string;
}

export const BATCH_DETAILS = 'batch_details';

export const batchDetailsProjection = defineProjection<BatchDetails>({
  name: BATCH_DETAILS,
  handles: [
    'BatchScheduled',
    'BatchCancelled',
    'BatchSendingStarted',
    'BatchRecipientSent',
    'BatchRecipientFailed',
    'BatchRecipientSkipped',
    'BatchDelivered',
  ],
  indexes: [{ keys: { partnerId: 1 } }, { keys: { status: 1 } }, { keys: { sendDay: 1 } }],
  documentIds: (event) => [(event.data as { batchId: string }).batchId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as BatchDayEvent | BatchDeliveryEvent;
    if (event.type === 'BatchScheduled') {
      const { partnerId, dealId, userIds, mode, sendAt, sendDay, createdAt } = event.data;
      return {
        _id: id,
        _pos: recorded.position,
        partnerId,
        dealId,
        userIds,
        mode,
        sendAt,
        sendDay,
        status: 'pending',
        sending: false,
        sent: 0,
        failed: 0,
        skipped: 0,
        createdAt,
      };
    }
    if (!view) return null;
    switch (event.type) {
      case 'BatchCancelled':
        return { ...view, status: 'cancelled' };
      case 'BatchSendingStarted':
        return { ...view, sending: true };
      case 'BatchRecipientSent':
        return { ...view, sent: view.sent + 1 };
      case 'BatchRecipientFailed':
        return { ...view, failed: view.failed + 1 };
      case 'BatchRecipientSkipped':
        return { ...view, skipped: view.skipped + 1 };
      case 'BatchDelivered':
        return { ...view, status: event.data.status, sending: false };
    }
  },
});
