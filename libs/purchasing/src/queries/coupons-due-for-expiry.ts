import { ViewStore } from '@deals/kernel';
import { COUPON_DETAILS, CouponDetails } from '../projections/coupon-details/coupon-details.projection';

/** Where a page of the sweep ended: its last coupon. */
export interface ExpiryCursor {
  expiresAt: number;
  id: string;
}

/**
 * Coupons of every partner (or of `partnerId` alone) whose expiry has passed at `now` (epoch ms)
 * and is not recorded, neither redeemed nor cancelled: oldest expiry first, then by id, up to
 * `limit` after `after`. Paging by the last coupon seen rather than by skip: a sweep goes on to the
 * next page without waiting for the view to show the expiries it recorded on this one.
 */
export function couponsDueForExpiry(
  views: ViewStore,
  now: number,
  after: ExpiryCursor | null,
  limit: number,
  partnerId?: string,
): Promise<CouponDetails[]> {
  const next = after ? { $or: [{ expiresAt: { $gt: after.expiresAt } }, { expiresAt: after.expiresAt, _id: { $gt: after.id } }] } : {};
  const whose = partnerId === undefined ? {} : { partnerId };
  return views.find<CouponDetails>(
    COUPON_DETAILS,
    { expiresAt: { $lte: now }, redeemedAt: null, cancelledAt: null, expiryRecorded: { $ne: true }, ...whose, ...next },
    { sort: { expiresAt: 1, _id: 1 }, limit },
  );
}
