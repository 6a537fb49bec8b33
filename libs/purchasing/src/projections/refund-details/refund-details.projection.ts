import { defineProjection, ViewDocument } from '@deals/kernel';
import type { PurchaseEvent, RefundRequested } from '../../domain/purchase/purchase.events';
import type { RefundState } from '../../domain/refund/refund-rules';

/** "What became of refund X; which refunds has purchase Y, or user Z?" The request's terms, and how it ended. */
export interface RefundDetails
  extends
    ViewDocument,
    Pick<RefundRequested['data'], 'purchaseId' | 'partnerId' | 'userId' | 'couponIds' | 'amountCents' | 'reason' | 'note' | 'forced'> {
  state: RefundState;
  failureReason: string | null;
  /** The processor's id of the money sent back; null for a claimed reservation's, or until it succeeds. */
  processorRefundId: string | null;
  createdAt: string;
  settledAt: string | null;
}

export const REFUND_DETAILS = 'refund_details_v1';

export const refundDetailsProjection = defineProjection<RefundDetails>({
  name: REFUND_DETAILS,
  handles: ['RefundRequested', 'RefundSucceeded', 'RefundFailed'],
  indexes: [{ keys: { purchaseId: 1 } }, { keys: { state: 1 } }, { keys: { partnerId: 1, userId: 1 } }, { keys: { createdAt: 1 } }],
  documentIds: (event) => [(event.data as { refundId: string }).refundId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as PurchaseEvent;
    switch (event.type) {
      case 'RefundRequested': {
        const { purchaseId, partnerId, userId, couponIds, amountCents, reason, note, forced, requestedAt } = event.data;
        return {
          _id: id,
          _pos: recorded.position,
          purchaseId,
          partnerId,
          userId,
          couponIds,
          amountCents,
          reason,
          note,
          forced,
          state: 'pending',
          failureReason: null,
          processorRefundId: null,
          createdAt: requestedAt,
          settledAt: null,
        };
      }
      case 'RefundSucceeded':
        return view && { ...view, state: 'succeeded', processorRefundId: event.data.processorRefundId, settledAt: event.data.settledAt };
      case 'RefundFailed':
        return view && { ...view, state: 'failed', failureReason: event.data.reason, settledAt: event.data.settledAt };
      default:
        return null;
    }
  },
});
