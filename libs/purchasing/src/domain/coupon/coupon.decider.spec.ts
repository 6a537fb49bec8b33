import { NotFound, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { couponDecider, CouponNotRefundable, REFUND_REASONS } from './coupon.decider';
import { CouponEvent } from './coupon.events';

const given = deciderSpec(couponDecider);
const now = new Date('2026-06-15T12:00:00Z');
const issued = (expiresAt: string | null = '2026-12-31T00:00:00Z'): CouponEvent => ({
  type: 'CouponIssued',
  data: {
    couponId: 'c1',
    purchaseId: 'p1',
    partnerId: 'a',
    userId: 'u1',
    dealId: 'd1',
    dealType: 'daily-deal',
    barcode: 'b',
    redemptionCode: 'r',
    expiresAt,
    issuedAt: now.toISOString(),
  },
});
const redeem = (partnerId = 'a', userId?: string) => ({ type: 'RedeemCoupon' as const, data: { couponId: 'c1', partnerId, userId } });

describe('coupon decider', () => {
  it('redeems a valid coupon, once', () => {
    given([issued()])
      .when(redeem(), now)
      .then([{ type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt: now.toISOString() } }]);
    given([issued(), { type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt: now.toISOString() } }])
      .when(redeem(), now)
      .thenThrows(ValidationFailed, { message: 'state is already redeemed' });
  });
  it('refuses an expired coupon', () =>
    given([issued('2026-06-01T00:00:00Z')])
      .when(redeem(), now)
      .thenThrows(ValidationFailed, { message: 'state has expired' }));
  it("does not find another partner's or another user's coupon", () => {
    given([issued()]).when(redeem('b'), now).thenThrows(NotFound);
    given([issued()]).when(redeem('a', 'u2'), now).thenThrows(NotFound);
    given([]).when(redeem(), now).thenThrows(NotFound);
  });
  it('cancels a valid coupon of a reseller purchase once; refuses the coupons of other purchases, shipped goods, and used coupons with the reseller reasons', () => {
    const cancel = (resold = true, partnerId = 'a') => ({ type: 'CancelCoupon' as const, data: { couponId: 'c1', partnerId, resold } });
    given([issued()])
      .when(cancel(), now)
      .then([{ type: 'CouponCancelled', data: { couponId: 'c1', cancelledAt: now.toISOString() } }]);
    given([issued()]).when(cancel(false), now).thenThrows(ValidationFailed, { message: 'the barcode is non-refundable' });
    given([issued(), { type: 'CouponCancelled', data: { couponId: 'c1', cancelledAt: now.toISOString() } }])
      .when(cancel(), now)
      .thenThrows(ValidationFailed, { message: 'the coupons are already part of another refund' });
    given([{ ...issued(), data: { ...issued().data, refundable: false } } as CouponEvent])
      .when(cancel(), now)
      .thenThrows(ValidationFailed, { message: 'the barcode is non-refundable' });
    given([issued(), { type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt: now.toISOString() } }])
      .when(cancel(), now)
      .thenThrows(ValidationFailed, { message: 'the coupon is in a non-refundable state' });
    given([issued('2026-06-01T00:00:00Z')])
      .when(cancel(), now)
      .thenThrows(ValidationFailed, { message: 'the coupon is in a non-refundable state' });
    given([issued()]).when(cancel(true, 'b'), now).thenThrows(NotFound);
  });
  it('is issued once', () =>
    given([issued()])
      .when({ type: 'IssueCoupon', data: issued().data as never }, now)
      .then([]));
});

describe('expire coupon', () => {
  const expiry = '2026-06-15T12:00:00Z';
  const expire = { type: 'ExpireCoupon' as const, data: { couponId: 'c1' } };
  const expired: CouponEvent = { type: 'CouponExpired', data: { couponId: 'c1', expiredAt: '2026-06-15T12:00:00.000Z' } };
  const at = (iso: string) => new Date(iso);

  describe('an issued coupon past its expiry', () => {
    it('records the expiry at its instant, not at the sweep time', () =>
      given([issued(expiry)])
        .when(expire, at('2026-06-15T12:07:30Z'))
        .then([expired]));
    it('records it from the expiry instant itself', () =>
      given([issued(expiry)])
        .when(expire, at(expiry))
        .then([expired]));
  });

  describe('an issued coupon before its expiry, or one that never expires', () => {
    it('records nothing', () => {
      given([issued(expiry)])
        .when(expire, at('2026-06-15T11:59:59.999Z'))
        .then([]);
      given([issued(null)])
        .when(expire, at('2030-01-01T00:00:00Z'))
        .then([]);
    });
  });

  describe('a coupon whose expiry is recorded', () => {
    it('records nothing again', () =>
      given([issued(expiry), expired])
        .when(expire, at('2026-06-15T12:20:00Z'))
        .then([]));
    it('is refused for redeem and cancel as before: a recorded expiry changes nothing a partner sees', () => {
      given([issued(expiry), expired])
        .when(redeem(), at('2026-06-15T12:20:00Z'))
        .thenThrows(ValidationFailed, { message: 'state has expired' });
      given([issued(expiry), expired])
        .when({ type: 'CancelCoupon', data: { couponId: 'c1', partnerId: 'a', resold: true } }, at('2026-06-15T12:20:00Z'))
        .thenThrows(ValidationFailed, { message: 'the coupon is in a non-refundable state' });
    });
  });

  describe('a redeemed or cancelled coupon past its expiry', () => {
    it('records nothing', () => {
      const redeemed: CouponEvent = { type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt: '2026-06-15T11:00:00.000Z' } };
      const cancelled: CouponEvent = { type: 'CouponCancelled', data: { couponId: 'c1', cancelledAt: '2026-06-15T11:00:00.000Z' } };
      given([issued(expiry), redeemed])
        .when(expire, at('2026-06-15T12:10:00Z'))
        .then([]);
      given([issued(expiry), cancelled])
        .when(expire, at('2026-06-15T12:10:00Z'))
        .then([]);
    });
  });

  describe('no coupon', () => {
    it('is not found', () => given([]).when(expire, at('2026-06-15T12:10:00Z')).thenThrows(NotFound));
  });
});

describe('coupon refunds', () => {
  const start = (refundId: string, forced = false) => ({
    type: 'StartRefund' as const,
    data: { couponId: 'c1', partnerId: 'a', refundId, forced },
  });
  const started = (refundId: string): CouponEvent => ({
    type: 'CouponRefundStarted',
    data: { couponId: 'c1', refundId, startedAt: now.toISOString() },
  });
  const redeemed: CouponEvent = { type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt: now.toISOString() } };

  it('is held for a refund, and cannot be redeemed while it is', () => {
    given([issued()])
      .when(start('r1'), now)
      .then([started('r1')]);
    given([issued(), started('r1')])
      .when(start('r1'), now)
      .then([]);
    given([issued(), started('r1')])
      .when({ type: 'RedeemCoupon', data: { couponId: 'c1', partnerId: 'a' } }, now)
      .thenThrows(ValidationFailed, { message: 'state is being refunded' });
  });
  it('refuses a redeemed or expired coupon, and goods whose barcode is not refundable, unless an operator forces it', () => {
    given([issued(), redeemed]).when(start('r1'), now).thenThrows(CouponNotRefundable, { message: REFUND_REASONS.state });
    given([{ ...issued(), data: { ...(issued().data as object), refundable: false } } as CouponEvent])
      .when(start('r1'), now)
      .thenThrows(CouponNotRefundable, { message: REFUND_REASONS.barcode });
    given([issued(), redeemed])
      .when(start('r1', true), now)
      .then([started('r1')]);
    given([{ ...issued(), data: { ...(issued().data as object), refundable: false } } as CouponEvent])
      .when(start('r1', true), now)
      .then([started('r1')]);
  });
  it('is held by one refund at a time, and never refunded twice', () => {
    given([issued(), started('r1')])
      .when(start('r2'), now)
      .thenThrows(CouponNotRefundable, { message: REFUND_REASONS.refunded });
    const refunded: CouponEvent = { type: 'CouponRefunded', data: { couponId: 'c1', refundId: 'r1', refundedAt: now.toISOString() } };
    given([issued(), started('r1')])
      .when({ type: 'FinishRefund', data: { couponId: 'c1', refundId: 'r1', outcome: 'succeeded' } }, now)
      .then([refunded]);
    given([issued(), started('r1'), refunded])
      .when(start('r2', true), now)
      .thenThrows(CouponNotRefundable, { message: REFUND_REASONS.refunded });
  });
  it('is given back when its refund fails, and may be refunded or redeemed again', () => {
    const released: CouponEvent = { type: 'CouponRefundReleased', data: { couponId: 'c1', refundId: 'r1', releasedAt: now.toISOString() } };
    given([issued(), started('r1')])
      .when({ type: 'FinishRefund', data: { couponId: 'c1', refundId: 'r1', outcome: 'released' } }, now)
      .then([released]);
    given([issued(), started('r1'), released])
      .when(start('r2'), now)
      .then([started('r2')]);
    given([issued(), started('r1'), released])
      .when({ type: 'RedeemCoupon', data: { couponId: 'c1', partnerId: 'a' } }, now)
      .then([{ type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt: now.toISOString() } }]);
    // A late outcome of another refund changes nothing.
    given([issued(), started('r2')])
      .when({ type: 'FinishRefund', data: { couponId: 'c1', refundId: 'r1', outcome: 'succeeded' } }, now)
      .then([]);
  });
});

describe('redemption rollbacks', () => {
  const redeemedAt = now.toISOString();
  const redeemed: CouponEvent = { type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt } };
  const rollBack = (partnerId = 'a', windowMs = 24 * 3_600_000) => ({
    type: 'RollBackRedemption' as const,
    data: {
      couponId: 'c1',
      partnerId,
      reason: 'redeemed_by_mistake' as const,
      note: 'wrong phone',
      by: 'partner:a',
      windowMs,
    },
  });
  const later = (ms: number) => new Date(now.getTime() + ms);
  const rolledBack = (at: Date): CouponEvent => ({
    type: 'CouponRedemptionRolledBack',
    data: {
      couponId: 'c1',
      redeemedAt,
      rolledBackAt: at.toISOString(),
      reason: 'redeemed_by_mistake',
      note: 'wrong phone',
      by: 'partner:a',
    },
  });

  it('undoes a redemption within the window, recording the reason and who asked; the coupon redeems again', () => {
    given([issued(), redeemed])
      .when(rollBack(), later(3_600_000))
      .then([rolledBack(later(3_600_000))]);
    given([issued(), redeemed, rolledBack(later(1000))])
      .when(redeem(), later(2000))
      .then([{ type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt: later(2000).toISOString() } }]);
  });
  it('undoes each redemption at most once: a coupon rolled back is no longer redeemed', () =>
    given([issued(), redeemed, rolledBack(later(1000))])
      .when(rollBack(), later(2000))
      .thenThrows(ValidationFailed, { message: 'state is not redeemed' }));
  it('refuses past the window, at the window it still undoes', () => {
    given([issued(), redeemed])
      .when(rollBack(), later(24 * 3_600_000 + 1))
      .thenThrows(ValidationFailed, { message: 'state was redeemed more than 24 hours ago: its redemption can no longer be rolled back' });
    given([issued(), redeemed])
      .when(rollBack(), later(24 * 3_600_000))
      .then([rolledBack(later(24 * 3_600_000))]);
  });
  it("takes the partner's window: one hour, or none at all", () => {
    given([issued(), redeemed])
      .when(rollBack('a', 3_600_000), later(3_600_001))
      .thenThrows(ValidationFailed, { message: 'state was redeemed more than 1 hour ago: its redemption can no longer be rolled back' });
    given([issued(), redeemed]).when(rollBack('a', 0), now).thenThrows(ValidationFailed, {
      message: "state was redeemed: the partner's rollback window is 0 hours, so no redemption is rolled back",
    });
  });
  it('refuses a valid, cancelled or refunded coupon, or one a forced refund holds, and does not find one of another partner', () => {
    given([issued()]).when(rollBack(), now).thenThrows(ValidationFailed, { message: 'state is not redeemed' });
    given([issued(), { type: 'CouponCancelled', data: { couponId: 'c1', cancelledAt: redeemedAt } }])
      .when(rollBack(), now)
      .thenThrows(ValidationFailed, { message: 'state is not redeemed' });
    given([issued(), redeemed]).when(rollBack('b'), now).thenThrows(NotFound);
    given([issued(), redeemed, { type: 'CouponRefundStarted', data: { couponId: 'c1', refundId: 'r1', startedAt: redeemedAt } }])
      .when(rollBack(), now)
      .thenThrows(ValidationFailed, { message: 'state is being refunded' });
  });
  it('gives back an expired coupon as expired: its redemption undone does not extend it', () =>
    given([issued('2026-06-15T12:30:00Z'), redeemed, rolledBack(later(3_600_000))])
      .when(redeem(), later(3_600_000))
      .thenThrows(ValidationFailed, { message: 'state has expired' }));
});
