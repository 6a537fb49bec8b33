import type { DomainEvent } from '@deals/kernel';

export type CouponIssued = DomainEvent<
  'CouponIssued',
  {
    couponId: string; purchaseId: string; partnerId: string; userId: string | null; dealId: string; dealType: string;
    barcode: string; redemptionCode: string; expiresAt: string | null; issuedAt: string;
  }
>;
export type CouponRedeemed = DomainEvent<'CouponRedeemed', { couponId: string; redeemedAt: string }>;
export type CouponEvent = CouponIssued | CouponRedeemed;

export const couponStream = (couponId: string) => `coupon-${couponId}`;
