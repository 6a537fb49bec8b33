import { Decider, DomainCommand, NotFound, ValidationFailed } from '@deals/kernel';
import type { RollbackReason } from './redemption-rollback';
import { CouponEvent, CouponIssued } from './coupon.events';

export type IssueCoupon = DomainCommand<'IssueCoupon', CouponIssued['data']>;
export type RedeemCoupon = DomainCommand<'RedeemCoupon', { couponId: string; partnerId: string; userId?: string }>;
/**
 * `resold`: whether the coupon's purchase is a reseller's. Only those are cancelled
 * through the reseller call (resellers check or cancel the coupons of their own sales); a
 * coupon of a card purchase or a claimed reservation is non-refundable there: voiding it would
 * leave its buyer charged with nothing to redeem.
 */
export type CancelCoupon = DomainCommand<'CancelCoupon', { couponId: string; partnerId: string; resold: boolean }>;
/** Records the expiry of a coupon whose time has passed, once (the expiry sweep's command). */
export type ExpireCoupon = DomainCommand<'ExpireCoupon', { couponId: string }>;
/**
 * Holds the coupon for a refund of its purchase. `forced`: an operator refunds a coupon the rules
 * keep (redeemed, expired, or goods whose barcode is not refundable).
 */
export type StartRefund = DomainCommand<'StartRefund', { couponId: string; partnerId: string; refundId: string; forced: boolean }>;
/** Ends the coupon's part in a refund: `succeeded` voids it, `released` (failed or given up) gives it back. */
export type FinishRefund = DomainCommand<'FinishRefund', { couponId: string; refundId: string; outcome: 'succeeded' | 'released' }>;
/** Undoes the coupon's redemption within `windowMs` of it, the reason and who asked recorded. */
export type RollBackRedemption = DomainCommand<
  'RollBackRedemption',
  { couponId: string; partnerId: string; reason: RollbackReason; note: string | null; by: string; windowMs: number }
>;
export type CouponCommand = IssueCoupon | RedeemCoupon | CancelCoupon | ExpireCoupon | StartRefund | FinishRefund | RollBackRedemption;

/** A cancel refused for one of the reseller reasons; the reseller body lists them. */
export class CouponNotRefundable extends ValidationFailed {
  constructor(readonly reason: string) {
    super([{ type: 'invalid', resource: 'coupon', field: 'state', message: reason }], reason);
  }
}

export const REFUND_REASONS = {
  barcode: 'the barcode is non-refundable',
  state: 'the coupon is in a non-refundable state',
  refunded: 'the coupons are already part of another refund',
} as const;

export interface Coupon {
  issued: boolean;
  partnerId: string | null;
  userId: string | null;
  expiresAt: number | null;
  redeemedAt: string | null;
  cancelled: boolean;
  refundable: boolean;
  /** The refund under way that holds it; null when none does. */
  refundingIn: string | null;
  /** The refund that paid it back (the coupon is then `cancelled`). */
  refundedIn: string | null;
  /** Whether `CouponExpired` is in the stream (the state is `expired` by the clock either way). */
  expiryRecorded: boolean;
}

const refuse = (message: string) => new ValidationFailed([{ type: 'invalid', resource: 'coupon', field: 'state', message }]);

/** The state of a coupon at `now`: valid until redeemed or past its expiry. */
export function couponState(
  coupon: {
    redeemedAt: string | null;
    expiresAt: number | null;
    cancelledAt?: string | null;
    cancelled?: boolean;
    refundedIn?: string | null;
  },
  now: number,
): 'valid' | 'redeemed' | 'expired' | 'cancelled' {
  if (coupon.cancelled || coupon.cancelledAt || coupon.refundedIn) return 'cancelled';
  if (coupon.redeemedAt) return 'redeemed';
  if (coupon.expiresAt !== null && coupon.expiresAt <= now) return 'expired';
  return 'valid';
}

export const couponDecider: Decider<Coupon, CouponCommand, CouponEvent> = {
  initialState: () => ({
    issued: false,
    partnerId: null,
    userId: null,
    expiresAt: null,
    redeemedAt: null,
    cancelled: false,
    refundable: true,
    expiryRecorded: false,
    refundingIn: null,
    refundedIn: null,
  }),
  decide(command, coupon, now) {
    switch (command.type) {
      case 'IssueCoupon':
        return coupon.issued ? [] : [{ type: 'CouponIssued', data: command.data }];
      case 'CancelCoupon': {
        const { couponId, partnerId } = command.data;
        if (!coupon.issued || coupon.partnerId !== partnerId) throw new NotFound('coupon not found');
        if (coupon.cancelled || coupon.refundedIn || coupon.refundingIn) throw new CouponNotRefundable(REFUND_REASONS.refunded);
        if (!command.data.resold || !coupon.refundable) throw new CouponNotRefundable(REFUND_REASONS.barcode);
        if (couponState(coupon, now.getTime()) !== 'valid') throw new CouponNotRefundable(REFUND_REASONS.state);
        return [{ type: 'CouponCancelled', data: { couponId, cancelledAt: now.toISOString() } }];
      }
      case 'ExpireCoupon': {
        const { couponId } = command.data;
        if (!coupon.issued) throw new NotFound('coupon not found');
        // A sweep may meet a coupon twice, or one redeemed or cancelled since it read the view: nothing to say then.
        if (coupon.expiryRecorded || coupon.expiresAt === null || couponState(coupon, now.getTime()) !== 'expired') return [];
        return [{ type: 'CouponExpired', data: { couponId, expiredAt: new Date(coupon.expiresAt).toISOString() } }];
      }
      case 'RedeemCoupon': {
        const { couponId, partnerId, userId } = command.data;
        if (!coupon.issued || coupon.partnerId !== partnerId || (userId !== undefined && coupon.userId !== userId))
          throw new NotFound('coupon not found');
        const state = couponState(coupon, now.getTime());
        if (state === 'cancelled') throw refuse('is cancelled');
        if (coupon.refundingIn) throw refuse('is being refunded');
        if (state === 'redeemed') throw refuse('is already redeemed');
        if (state === 'expired') throw refuse('has expired');
        return [{ type: 'CouponRedeemed', data: { couponId, redeemedAt: now.toISOString() } }];
      }
      case 'StartRefund': {
        const { couponId, partnerId, refundId, forced } = command.data;
        if (!coupon.issued || coupon.partnerId !== partnerId) throw new NotFound('coupon not found');
        if (coupon.refundingIn === refundId) return [];
        if (coupon.cancelled || coupon.refundedIn || coupon.refundingIn) throw new CouponNotRefundable(REFUND_REASONS.refunded);
        if (!forced && !coupon.refundable) throw new CouponNotRefundable(REFUND_REASONS.barcode);
        if (!forced && couponState(coupon, now.getTime()) !== 'valid') throw new CouponNotRefundable(REFUND_REASONS.state);
        return [{ type: 'CouponRefundStarted', data: { couponId, refundId, startedAt: now.toISOString() } }];
      }
      case 'RollBackRedemption': {
        const { couponId, partnerId, reason, note, by, windowMs } = command.data;
        if (!coupon.issued || coupon.partnerId !== partnerId) throw new NotFound('coupon not found');
        if (couponState(coupon, now.getTime()) !== 'redeemed' || !coupon.redeemedAt) throw refuse('is not redeemed');
        if (coupon.refundingIn) throw refuse('is being refunded');
        if (windowMs === 0) throw refuse("was redeemed: the partner's rollback window is 0 hours, so no redemption is rolled back");
        if (now.getTime() - Date.parse(coupon.redeemedAt) > windowMs) {
          const hours = windowMs / 3_600_000;
          throw refuse(`was redeemed more than ${hours} hour${hours === 1 ? '' : 's'} ago: its redemption can no longer be rolled back`);
        }
        return [
          {
            type: 'CouponRedemptionRolledBack',
            data: { couponId, redeemedAt: coupon.redeemedAt, rolledBackAt: now.toISOString(), reason, note, by },
          },
        ];
      }
      case 'FinishRefund': {
        const { couponId, refundId, outcome } = command.data;
        if (coupon.refundingIn !== refundId) return [];
        return outcome === 'succeeded'
          ? [{ type: 'CouponRefunded', data: { couponId, refundId, refundedAt: now.toISOString() } }]
          : [{ type: 'CouponRefundReleased', data: { couponId, refundId, releasedAt: now.toISOString() } }];
      }
    }
  },
  evolve(coupon, event) {
    switch (event.type) {
      case 'CouponIssued':
        return {
          issued: true,
          partnerId: event.data.partnerId,
          userId: event.data.userId,
          expiresAt: event.data.expiresAt ? Date.parse(event.data.expiresAt) : null,
          redeemedAt: null,
          cancelled: false,
          refundable: event.data.refundable !== false,
          expiryRecorded: false,
          refundingIn: null,
          refundedIn: null,
        };
      case 'CouponRedeemed':
        return { ...coupon, redeemedAt: event.data.redeemedAt };
      case 'CouponCancelled':
        return { ...coupon, cancelled: true };
      case 'CouponExpired':
        return { ...coupon, expiryRecorded: true };
      case 'CouponRefundStarted':
        return { ...coupon, refundingIn: event.data.refundId };
      case 'CouponRefunded':
        return { ...coupon, refundingIn: null, refundedIn: event.data.refundId };
      case 'CouponRefundReleased':
        return { ...coupon, refundingIn: null };
      case 'CouponRedemptionRolledBack':
        return { ...coupon, redeemedAt: null };
    }
  },
};
