import { defineProjection, ViewDocument } from '@deals/kernel';
import type { CouponIssued } from '../../domain/coupon/coupon.events';
import type { DealSnapshot, PurchaseEvent } from '../../domain/purchase/purchase.events';
import type { ShippingAddress } from '../../domain/purchase/shipping-address';

/** "What is purchase X now?" */
export interface PurchaseDetails extends ViewDocument {
  partnerId: string;
  userId: string | null;
  creditCardId: string | null;
  deal: DealSnapshot;
  quantity: number;
  amountCents: number;
  /** pending, charged, or (stored-card purchases) declined or failed. */
  paymentState: 'pending' | 'charged' | 'declined' | 'failed';
  fulfillmentState: 'reserved' | 'fulfilled' | 'released';
  holdExpiresAt: string;
  couponIds: string[];
  /**
   * Coupons the purchase's fulfilment named that are not issued yet: above 0 only between the
   * fulfilment and its coupons, or after a crash there (recovery issues them at start).
   */
  couponsOwed: number;
  couponsIssued: number;
  createdAt: string;
  shippingAddress: ShippingAddress | null;
  /** Set on purchases the service charges itself: whom it charges, with which card. */
  paymentIntent?: { userId: string; creditCardId: string } | null;
  /** Set on sales a reseller recorded (from its reservation, since session 13). */
  transactionReference?: string;
}

/** v2: counts the coupons issued (CouponIssued), so the coupons a crash left owed can be found. */
export const PURCHASE_DETAILS = 'purchase_details_v2';

const fulfilled = (view: PurchaseDetails, couponIds: string[]) => ({ couponIds, couponsOwed: Math.max(0, couponIds.length - view.couponsIssued) });

export const purchaseDetailsProjection = defineProjection<PurchaseDetails>({
  name: PURCHASE_DETAILS,
  handles: ['PurchaseReserved', 'PurchaseClaimed', 'PurchaseReleased', 'PurchasePaid', 'PurchaseNotPaid', 'PurchaseResold', 'CouponIssued'],
  indexes: [{ keys: { userId: 1 } }, { keys: { partnerId: 1 } }, { keys: { fulfillmentState: 1 } }, { keys: { createdAt: 1 } }, { keys: { couponsOwed: 1 } }],
  documentIds: (event) => [(event.data as { purchaseId: string }).purchaseId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as PurchaseEvent | CouponIssued;
    switch (event.type) {
      case 'PurchaseReserved': {
        const { partnerId, deal, quantity, reservedAt, holdExpiresAt, shipping, payment, transactionReference } = event.data;
        return {
          _id: id, _pos: recorded.position, partnerId, userId: null, creditCardId: null, deal, quantity, amountCents: deal.unitPrice * quantity,
          paymentState: 'pending', fulfillmentState: 'reserved', holdExpiresAt, couponIds: [], couponsOwed: 0, couponsIssued: 0, createdAt: reservedAt, shippingAddress: shipping ?? null,
          paymentIntent: payment ? { userId: payment.userId, creditCardId: payment.creditCardId } : null,
          ...(transactionReference === undefined ? {} : { transactionReference }),
        };
      }
      case 'PurchaseClaimed':
        return view && { ...view, userId: event.data.userId, amountCents: event.data.amountCents, paymentState: 'charged', fulfillmentState: 'fulfilled', ...fulfilled(view, event.data.couponIds) };
      case 'PurchaseReleased':
        return view && { ...view, fulfillmentState: 'released' };
      case 'PurchasePaid': {
        const { userId, creditCardId, amountCents, couponIds } = event.data;
        return view && { ...view, userId, creditCardId, amountCents, paymentState: 'charged', fulfillmentState: 'fulfilled', ...fulfilled(view, couponIds) };
      }
      case 'PurchaseResold':
        return view && { ...view, amountCents: event.data.amountCents, paymentState: 'charged', fulfillmentState: 'fulfilled', ...fulfilled(view, event.data.couponIds), transactionReference: event.data.transactionReference };
      case 'PurchaseNotPaid':
        return view && { ...view, paymentState: event.data.outcome === 'declined' ? 'declined' : 'failed', fulfillmentState: 'released' };
      case 'CouponIssued': {
        if (!view) return view;
        const couponsIssued = view.couponsIssued + 1;
        return { ...view, couponsIssued, couponsOwed: Math.max(0, view.couponIds.length - couponsIssued) };
      }
    }
  },
});
