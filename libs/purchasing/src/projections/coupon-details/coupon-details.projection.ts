import { defineProjection, ViewDocument } from '@deals/kernel';
import type { CouponEvent } from '../../domain/coupon/coupon.events';

/** "What is coupon X, and which coupons does user Y hold?" */
export interface CouponDetails extends ViewDocument {
  partnerId: string;
  userId: string | null;
  purchaseId: string;
  /** The coupon's number within its purchase (`<purchase id>-<number>`, from 1): lists sort by it, not by the id's text. */
  number: number;
  dealId: string;
  dealType: string;
  barcode: string;
  redemptionCode: string;
  /** Epoch milliseconds, or null for a coupon that never expires. */
  expiresAt: number | null;
  issuedAt: string;
  redeemedAt: string | null;
  cancelledAt: string | null;
  /** `CouponExpired` is in the log (the expiry sweep's); absent in documents written before it was handled. */
  expiryRecorded?: boolean;
  /** The refund under way that holds it, or that paid it back (then `cancelledAt` is set); absent: none. */
  refundId?: string | null;
}

/**
 * v2 adds `number`, so a user's list orders a purchase's coupons -2 before -10. `CouponExpired`
 * and the refund events joined later without a new name: no event before them changes meaning, and
 * a document without `expiryRecorded` or `refundId` reads as not recorded, not refunded.
 */
export const COUPON_DETAILS = 'coupon_details_v2';

export const couponDetailsProjection = defineProjection<CouponDetails>({
  name: COUPON_DETAILS,
  // Written with the events that change it: a purchase's answer and its next read, on any replica, find it.
  inline: { bornOf: ['CouponIssued'] },
  handles: [
    'CouponIssued',
    'CouponRedeemed',
    'CouponCancelled',
    'CouponExpired',
    'CouponRefundStarted',
    'CouponRefunded',
    'CouponRefundReleased',
    'CouponRedemptionRolledBack',
  ],
  indexes: [
    { keys: { userId: 1 } },
    { keys: { purchaseId: 1 } },
    { keys: { partnerId: 1 } },
    { keys: { issuedAt: 1 } },
    // The expiry sweep's range: coupons whose expiry has passed, oldest first.
    { keys: { expiresAt: 1 } },
  ],
  documentIds: (event) => [(event.data as { couponId: string }).couponId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as CouponEvent;
    if (event.type === 'CouponRedeemed') return view && { ...view, redeemedAt: event.data.redeemedAt };
    if (event.type === 'CouponCancelled') return view && { ...view, cancelledAt: event.data.cancelledAt };
    if (event.type === 'CouponExpired') return view && { ...view, expiryRecorded: true };
    if (event.type === 'CouponRefundStarted') return view && { ...view, refundId: event.data.refundId };
    if (event.type === 'CouponRefunded') return view && { ...view, refundId: event.data.refundId, cancelledAt: event.data.refundedAt };
    if (event.type === 'CouponRefundReleased') return view && { ...view, refundId: null };
    if (event.type === 'CouponRedemptionRolledBack') return view && { ...view, redeemedAt: null };
    const { partnerId, userId, purchaseId, dealId, dealType, barcode, redemptionCode, expiresAt, issuedAt } = event.data;
    const number = Number(id.slice(purchaseId.length + 1));
    return {
      _id: id,
      _pos: recorded.position,
      partnerId,
      userId,
      purchaseId,
      number,
      dealId,
      dealType,
      barcode,
      redemptionCode,
      expiresAt: expiresAt ? Date.parse(expiresAt) : null,
      issuedAt,
      redeemedAt: null,
      cancelledAt: null,
      expiryRecorded: false,
    };
  },
});
