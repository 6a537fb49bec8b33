import type { DomainEvent } from '@deals/kernel';
import type { RollbackReason } from './redemption-rollback';

export type CouponIssued = DomainEvent<
  'CouponIssued',
  {
    couponId: string;
    purchaseId: string;
    partnerId: string;
    userId: string | null;
    dealId: string;
    dealType: string;
    barcode: string;
    redemptionCode: string;
    expiresAt: string | null;
    issuedAt: string;
    /** False for goods already shipped: their barcode cannot be refunded. Absent means refundable. */
    refundable?: boolean;
  }
>;
/** Cancelled and refunded (a reseller's cancel). Its unit is not put back on sale (docs/decisions.md). */
export type CouponCancelled = DomainEvent<'CouponCancelled', { couponId: string; cancelledAt: string }>;
export type CouponRedeemed = DomainEvent<'CouponRedeemed', { couponId: string; redeemedAt: string }>;
/**
 * Its expiry passed while it was neither redeemed nor cancelled: recorded by the expiry sweep within
 * minutes of `expiredAt` (the coupon's expiry instant, not the sweep's time). The coupon was already
 * `expired` by the clock; this makes it a fact of the log that projections can see.
 */
export type CouponExpired = DomainEvent<'CouponExpired', { couponId: string; expiredAt: string }>;
/** Held for a refund under way (`refundId`): it cannot be redeemed until the refund ends. */
export type CouponRefundStarted = DomainEvent<'CouponRefundStarted', { couponId: string; refundId: string; startedAt: string }>;
/** Its money went back with the refund: the coupon is void (state `cancelled`). */
export type CouponRefunded = DomainEvent<'CouponRefunded', { couponId: string; refundId: string; refundedAt: string }>;
/** The refund that held it failed or was given up: the coupon is as it was. */
export type CouponRefundReleased = DomainEvent<'CouponRefundReleased', { couponId: string; refundId: string; releasedAt: string }>;
/**
 * Its redemption (at `redeemedAt`) undone, with the reason and who asked (`by`, the caller's
 * actor): the coupon is as before it, valid unless it expired meanwhile.
 */
export type CouponRedemptionRolledBack = DomainEvent<
  'CouponRedemptionRolledBack',
  { couponId: string; redeemedAt: string; rolledBackAt: string; reason: RollbackReason; note: string | null; by: string }
>;
export type CouponEvent =
  | CouponIssued
  | CouponRedeemed
  | CouponCancelled
  | CouponExpired
  | CouponRefundStarted
  | CouponRefunded
  | CouponRefundReleased
  | CouponRedemptionRolledBack;

export const couponStream = (couponId: string) => `coupon-${couponId}`;
