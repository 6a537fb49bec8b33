import { Decider, DomainCommand, NotFound, ValidationFailed } from '@deals/kernel';
import { CouponEvent, CouponIssued } from './coupon.events';

export type IssueCoupon = DomainCommand<'IssueCoupon', CouponIssued['data']>;
export type RedeemCoupon = DomainCommand<'RedeemCoupon', { couponId: string; partnerId: string; userId?: string }>;
export type CouponCommand = IssueCoupon | RedeemCoupon;

export interface Coupon {
  issued: boolean;
  partnerId: string | null;
  userId: string | null;
  expiresAt: number | null;
  redeemedAt: string | null;
}

const refuse = (message: string) => new ValidationFailed([{ type: 'invalid', resource: 'coupon', field: 'state', message }]);

/** The state of a coupon at `now`: valid until redeemed or past its expiry. */
export function couponState(coupon: { redeemedAt: string | null; expiresAt: number | null }, now: number): 'valid' | 'redeemed' | 'expired' {
  if (coupon.redeemedAt) return 'redeemed';
  if (coupon.expiresAt !== null && coupon.expiresAt <= now) return 'expired';
  return 'valid';
}

export const couponDecider: Decider<Coupon, CouponCommand, CouponEvent> = {
  initialState: () => ({ issued: false, partnerId: null, userId: null, expiresAt: null, redeemedAt: null }),
  decide(command, coupon, now) {
    if (command.type === 'IssueCoupon') return coupon.issued ? [] : [{ type: 'CouponIssued', data: command.data }];
    const { couponId, partnerId, userId } = command.data;
    if (!coupon.issued || coupon.partnerId !== partnerId || (userId !== undefined && coupon.userId !== userId)) throw new NotFound(`coupon ${couponId} not found`);
    const state = couponState(coupon, now.getTime());
    if (state === 'redeemed') throw refuse('is already redeemed');
    if (state === 'expired') throw refuse('has expired');
    return [{ type: 'CouponRedeemed', data: { couponId, redeemedAt: now.toISOString() } }];
  },
  evolve(coupon, event) {
    switch (event.type) {
      case 'CouponIssued':
        return { issued: true, partnerId: event.data.partnerId, userId: event.data.userId, expiresAt: event.data.expiresAt ? Date.parse(event.data.expiresAt) : null, redeemedAt: null };
      case 'CouponRedeemed':
        return { ...coupon, redeemedAt: event.data.redeemedAt };
    }
  },
};
