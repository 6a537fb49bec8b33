import { Decider, DomainCommand, NotFound, unknownCommand, ValidationFailed } from '@deals/kernel';
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

/** What an issued coupon keeps whatever becomes of it. */
interface IssuedTerms {
  partnerId: string;
  /** The user the coupon was issued to; null for a reseller's sale (its buyer is the reseller's). */
  holder: string | null;
  expiresAt: number | null;
  refundable: boolean;
  /** When it was redeemed, or null while it is not (never, or its redemption rolled back). */
  redeemedAt: string | null;
  /** Whether `CouponExpired` is in the stream (the state is `expired` by the clock either way). */
  expiryRecorded: boolean;
}

/**
 * An issued coupon: `issued` as it was issued (redeemed or not), `cancelled` by its reseller,
 * `refunding` held by a refund under way, `refunded` paid back by one (void, as a cancelled one).
 */
export type IssuedCoupon = IssuedTerms & ({ status: 'issued' | 'cancelled' } | { status: 'refunding' | 'refunded'; refundId: string });

export type Coupon = { status: 'none' } | IssuedCoupon;

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

/** The partner's coupon (and the user's, when one is named); one never issued, or another's, is not found. */
function partnersCoupon(coupon: Coupon, partnerId: string, userId?: string): IssuedCoupon {
  if (coupon.status === 'none' || coupon.partnerId !== partnerId || (userId !== undefined && coupon.holder !== userId))
    throw new NotFound('coupon not found');
  return coupon;
}

/** The coupon's state at `now`: a refunded coupon reads cancelled. */
const stateAt = (coupon: IssuedCoupon, now: Date) =>
  couponState({ ...coupon, cancelled: coupon.status === 'cancelled' || coupon.status === 'refunded' }, now.getTime());

export const couponDecider: Decider<Coupon, CouponCommand, CouponEvent> = {
  initialState: () => ({ status: 'none' }),

  decide(command, coupon, now) {
    switch (command.type) {
      case 'IssueCoupon':
        return coupon.status === 'none' ? [{ type: 'CouponIssued', data: command.data }] : [];
      case 'RedeemCoupon': {
        const { couponId, partnerId, userId } = command.data;
        const redeemed = partnersCoupon(coupon, partnerId, userId);
        const state = stateAt(redeemed, now);
        if (state === 'cancelled') throw refuse('is cancelled');
        if (redeemed.status === 'refunding') throw refuse('is being refunded');
        if (state === 'redeemed') throw refuse('is already redeemed');
        if (state === 'expired') throw refuse('has expired');
        return [{ type: 'CouponRedeemed', data: { couponId, redeemedAt: now.toISOString() } }];
      }
      case 'CancelCoupon': {
        const { couponId, partnerId, resold } = command.data;
        const cancelled = partnersCoupon(coupon, partnerId);
        if (cancelled.status !== 'issued') throw new CouponNotRefundable(REFUND_REASONS.refunded);
        if (!resold || !cancelled.refundable) throw new CouponNotRefundable(REFUND_REASONS.barcode);
        if (stateAt(cancelled, now) !== 'valid') throw new CouponNotRefundable(REFUND_REASONS.state);
        return [{ type: 'CouponCancelled', data: { couponId, cancelledAt: now.toISOString() } }];
      }
      case 'ExpireCoupon': {
        if (coupon.status === 'none') throw new NotFound('coupon not found');
        // A sweep may meet a coupon twice, or one redeemed or cancelled since it read the view: nothing to say then.
        if (coupon.expiryRecorded || coupon.expiresAt === null || stateAt(coupon, now) !== 'expired') return [];
        return [{ type: 'CouponExpired', data: { couponId: command.data.couponId, expiredAt: new Date(coupon.expiresAt).toISOString() } }];
      }
      case 'StartRefund': {
        const { couponId, partnerId, refundId, forced } = command.data;
        const held = partnersCoupon(coupon, partnerId);
        if (held.status === 'refunding' && held.refundId === refundId) return [];
        if (held.status !== 'issued') throw new CouponNotRefundable(REFUND_REASONS.refunded);
        if (!forced && !held.refundable) throw new CouponNotRefundable(REFUND_REASONS.barcode);
        if (!forced && stateAt(held, now) !== 'valid') throw new CouponNotRefundable(REFUND_REASONS.state);
        return [{ type: 'CouponRefundStarted', data: { couponId, refundId, startedAt: now.toISOString() } }];
      }
      case 'FinishRefund': {
        const { couponId, refundId, outcome } = command.data;
        if (coupon.status !== 'refunding' || coupon.refundId !== refundId) return [];
        return outcome === 'succeeded'
          ? [{ type: 'CouponRefunded', data: { couponId, refundId, refundedAt: now.toISOString() } }]
          : [{ type: 'CouponRefundReleased', data: { couponId, refundId, releasedAt: now.toISOString() } }];
      }
      case 'RollBackRedemption': {
        const { couponId, partnerId, reason, note, by, windowMs } = command.data;
        const redeemed = partnersCoupon(coupon, partnerId);
        const { redeemedAt } = redeemed;
        if (stateAt(redeemed, now) !== 'redeemed' || !redeemedAt) throw refuse('is not redeemed');
        if (redeemed.status === 'refunding') throw refuse('is being refunded');
        if (windowMs === 0) throw refuse("was redeemed: the partner's rollback window is 0 hours, so no redemption is rolled back");
        if (now.getTime() - Date.parse(redeemedAt) > windowMs) {
          const hours = windowMs / 3_600_000;
          throw refuse(`was redeemed more than ${hours} hour${hours === 1 ? '' : 's'} ago: its redemption can no longer be rolled back`);
        }
        return [{ type: 'CouponRedemptionRolledBack', data: { couponId, redeemedAt, rolledBackAt: now.toISOString(), reason, note, by } }];
      }
      default:
        return unknownCommand(command);
    }
  },

  evolve(coupon, event) {
    if (event.type === 'CouponIssued') {
      const { partnerId, userId, expiresAt, refundable } = event.data;
      const terms = { partnerId, holder: userId, expiresAt: expiresAt ? Date.parse(expiresAt) : null, refundable: refundable !== false };
      return { status: 'issued', ...terms, redeemedAt: null, expiryRecorded: false };
    }
    // Every other event follows the issue: none comes to a coupon never issued.
    if (coupon.status === 'none') return coupon;
    switch (event.type) {
      case 'CouponRedeemed':
        return { ...coupon, redeemedAt: event.data.redeemedAt };
      case 'CouponRedemptionRolledBack':
        return { ...coupon, redeemedAt: null };
      case 'CouponCancelled':
        return { ...terms(coupon), status: 'cancelled' };
      case 'CouponExpired':
        return { ...coupon, expiryRecorded: true };
      case 'CouponRefundStarted':
        return { ...terms(coupon), status: 'refunding', refundId: event.data.refundId };
      case 'CouponRefunded':
        return { ...terms(coupon), status: 'refunded', refundId: event.data.refundId };
      case 'CouponRefundReleased':
        // Gives back the coupon the refund held (only a refund under way is released).
        return coupon.status === 'refunding' ? { ...terms(coupon), status: 'issued' } : coupon;
      default: {
        const unhandled: never = event;
        return unhandled;
      }
    }
  },
};

/** The coupon's terms, without its status. */
function terms(coupon: IssuedCoupon): IssuedTerms {
  const { partnerId, holder, expiresAt, refundable, redeemedAt, expiryRecorded } = coupon;
  return { partnerId, holder, expiresAt, refundable, redeemedAt, expiryRecorded };
}
