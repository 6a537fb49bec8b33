import { defineProjection, ViewDocument } from '@deals/kernel';
import type { CouponIssued } from '../../domain/coupon/coupon.events';
import { purchasesOfHold, type UnitsSold } from '../../domain/inventory/inventory.events';
import type { DealSnapshot, GiftMailed, PurchaseEvent } from '../../domain/purchase/purchase.events';
import { reservationLapsed } from '../../domain/purchase/reservation-lapse';
import { refundDetailsProjection, type RefundDetails } from '../refund-details/refund-details.projection';

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
   * fulfilment and its coupons in the fold of the sale's append (the feed's `purchase.completed`
   * waits for 0), or where a sale was left part-written (a store appending stream by stream, a log
   * from step-by-step sales): recovery issues them at start.
   */
  couponsOwed: number;
  couponsIssued: number;
  createdAt: string;
  /**
   * The id of the shipping address given with the purchase. The address itself is personal data:
   * kept in the log only, under the buyer's key, so that erasing the buyer erases it.
   */
  shippingAddressId: string | null;
  /** Set on purchases the service charges itself: whom it charges, with which card. */
  paymentIntent?: { userId: string; creditCardId: string } | null;
  /** Set on sales a reseller recorded (from its reservation; absent from the oldest). */
  transactionReference?: string;
  /**
   * Units are being sold to this purchase and the sale is not recorded on it yet: a reseller's sale
   * from its reservation (its start's unit) until it is resold (its sale's unit); a reservation
   * from the sale of its hold (or of the hold a claim took in its place, `-r`) until it is claimed,
   * which the claim's one unit leaves only on a store appending stream by stream or in a log from
   * step-by-step sales. What start-up recovery looks at for sales a stop interrupted, so that it
   * reads these few rather than every reservation ever made. Card purchases are settled from their
   * payment intent instead, and are never marked.
   */
  saleInProgress: boolean;
  /**
   * A reservation's own hold was sold to it (a claim of the live hold): it never lapses after that.
   * Absent otherwise (and from documents older than the field, read as not sold).
   */
  holdSold?: true;
  /** Its refunds, oldest first, as the refunds view keeps each (absent until the first). */
  refunds?: RefundDetails[];
  /**
   * A gift's (bought for someone else): who holds its coupons, when they are mailed them (null:
   * once sold), and what became of the mail (`not_sent` too for a gift never paid). Its name and
   * message are personal data: kept in the log only, under the recipient's key.
   */
  gift?: { recipientUserId: string; deliverAt: string | null; mail: 'scheduled' | GiftMailed['data']['outcome']; mailedAt: string | null };
  /** A gift paid for whose mail is not recorded yet (what its mailer arms again at a start); absent otherwise. */
  giftMailDue?: true;
}

/**
 * v2: counts the coupons issued (CouponIssued), so the coupons a crash left owed can be found.
 * v3: marks the sales in progress (`saleInProgress`).
 */
export const PURCHASE_DETAILS = 'purchase_details_v3';

/**
 * The purchase's fulfilment at `now` (epoch ms): as the view keeps it, except a reservation whose
 * hold lapsed unclaimed, which reads released from its expiry on until a claim records its sale
 * (the view keeps it reserved: a lapse needs no event, and a claim reads the log, not the view).
 */
export function fulfillmentStateAt(view: PurchaseDetails, now: number): PurchaseDetails['fulfillmentState'] {
  const reservation = view.fulfillmentState === 'reserved' && !view.paymentIntent && view.transactionReference === undefined;
  return reservation && reservationLapsed({ holdExpiresAt: view.holdExpiresAt, holdSold: view.holdSold === true }, now)
    ? 'released'
    : view.fulfillmentState;
}

const fulfilled = (view: PurchaseDetails, couponIds: string[]) => ({
  couponIds,
  couponsOwed: Math.max(0, couponIds.length - view.couponsIssued),
});

export const purchaseDetailsProjection = defineProjection<PurchaseDetails>({
  name: PURCHASE_DETAILS,
  // Written with the events that change it: a purchase's answer and its next read, on any replica, find it.
  inline: { bornOf: ['PurchaseReserved'] },
  handles: [
    'PurchaseReserved',
    'PurchaseClaimed',
    'PurchaseReleased',
    'PurchasePaid',
    'PurchaseNotPaid',
    'PurchaseResold',
    'CouponIssued',
    'UnitsSold',
    'RefundRequested',
    'RefundSucceeded',
    'RefundFailed',
    'GiftMailed',
  ],
  indexes: [
    { keys: { userId: 1 } },
    { keys: { partnerId: 1 } },
    { keys: { fulfillmentState: 1 } },
    { keys: { createdAt: 1 } },
    { keys: { couponsOwed: 1 } },
    { keys: { saleInProgress: 1 } },
    { keys: { shippingAddressId: 1 } },
    { keys: { giftMailDue: 1 } },
  ],
  documentIds: (event) =>
    event.type === 'UnitsSold'
      ? purchasesOfHold((event.data as UnitsSold['data']).holdId)
      : [(event.data as { purchaseId: string }).purchaseId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as PurchaseEvent | CouponIssued | UnitsSold;
    switch (event.type) {
      case 'UnitsSold':
        // Only a reservation's sale is marked here (a resale is from its reservation on).
        return view && !view.saleInProgress && !view.paymentIntent && view.fulfillmentState !== 'fulfilled'
          ? { ...view, saleInProgress: true, ...((event.data as UnitsSold['data']).holdId === id ? { holdSold: true as const } : {}) }
          : null;
      case 'PurchaseReserved': {
        const { partnerId, deal, quantity, reservedAt, holdExpiresAt, shipping, payment, transactionReference, gift } = event.data;
        return {
          _id: id,
          _pos: recorded.position,
          partnerId,
          userId: null,
          creditCardId: null,
          deal,
          quantity,
          amountCents: deal.unitPrice * quantity,
          paymentState: 'pending',
          fulfillmentState: 'reserved',
          holdExpiresAt,
          couponIds: [],
          couponsOwed: 0,
          couponsIssued: 0,
          createdAt: reservedAt,
          shippingAddressId: shipping?.id ?? null,
          paymentIntent: payment ? { userId: payment.userId, creditCardId: payment.creditCardId } : null,
          ...(transactionReference === undefined ? {} : { transactionReference }),
          saleInProgress: transactionReference !== undefined,
          ...(gift ? { gift: { recipientUserId: gift.userId, deliverAt: gift.deliverAt, mail: 'scheduled', mailedAt: null } } : {}),
        };
      }
      case 'PurchaseClaimed':
        return (
          view && {
            ...view,
            userId: event.data.userId,
            amountCents: event.data.amountCents,
            paymentState: 'charged',
            fulfillmentState: 'fulfilled',
            ...fulfilled(view, event.data.couponIds),
            saleInProgress: false,
          }
        );
      case 'PurchaseReleased':
        return view && { ...view, fulfillmentState: 'released' };
      case 'PurchasePaid': {
        const { userId, creditCardId, amountCents, couponIds } = event.data;
        return (
          view && {
            ...view,
            userId,
            creditCardId,
            amountCents,
            paymentState: 'charged',
            fulfillmentState: 'fulfilled',
            ...fulfilled(view, couponIds),
            saleInProgress: false,
            ...(view.gift && view.gift.mail === 'scheduled' ? { giftMailDue: true as const } : {}),
          }
        );
      }
      case 'PurchaseResold':
        return (
          view && {
            ...view,
            amountCents: event.data.amountCents,
            paymentState: 'charged',
            fulfillmentState: 'fulfilled',
            ...fulfilled(view, event.data.couponIds),
            transactionReference: event.data.transactionReference,
            saleInProgress: false,
          }
        );
      case 'ResaleBuyerErased':
        return null;
      case 'PurchaseNotPaid':
        return (
          view && {
            ...view,
            paymentState: event.data.outcome === 'declined' ? 'declined' : 'failed',
            fulfillmentState: 'released',
            // A gift never paid for is never mailed.
            ...(view.gift ? { gift: { ...view.gift, mail: 'not_sent' as const } } : {}),
          }
        );
      case 'GiftMailed': {
        if (!view?.gift) return null;
        const { giftMailDue: _done, ...rest } = view;
        return { ...rest, gift: { ...view.gift, mail: event.data.outcome, mailedAt: event.data.mailedAt } };
      }
      case 'CouponIssued': {
        if (!view) return view;
        const couponsIssued = view.couponsIssued + 1;
        return { ...view, couponsIssued, couponsOwed: Math.max(0, view.couponIds.length - couponsIssued) };
      }
      case 'RefundRequested':
      case 'RefundSucceeded':
      case 'RefundFailed': {
        if (!view) return view;
        const { refundId } = event.data;
        const refunds = view.refunds ?? [];
        const refund = refundDetailsProjection.evolve(refunds.find((r) => r._id === refundId) ?? null, recorded, refundId);
        if (!refund) return null;
        const others = refunds.filter((r) => r._id !== refundId);
        return {
          ...view,
          refunds: event.type === 'RefundRequested' ? [...others, refund] : refunds.map((r) => (r._id === refundId ? refund : r)),
        };
      }
    }
  },
});
