import type { DomainEvent } from '@deals/kernel';

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
/** Cancelled and refunded (part 4.7). Its unit is not put back on sale (docs/decisions.md). */
export type CouponCancelled = DomainEvent<'CouponCancelled', { couponId: string; cancelledAt: string }>;
export type CouponRedeemed = DomainEvent<'CouponRedeemed', { couponId: string; redeemedAt: string }>;
export type CouponEvent = CouponIssued | CouponRedeemed | CouponCancelled;

export const couponStream = (couponId: string) => `coupon-${couponId}`;
