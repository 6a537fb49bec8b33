import { NotFound, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '../../../../testing/src/decider-spec';
import { couponDecider } from './coupon.decider';
import { CouponEvent } from './coupon.events';

const given = deciderSpec(couponDecider);
const now = new Date('2026-06-15T12:00:00Z');
const issued = (expiresAt: string | null = '2026-12-31T00:00:00Z'): CouponEvent => ({
  type: 'CouponIssued',
  data: { couponId: 'c1', purchaseId: 'p1', partnerId: 'a', userId: 'u1', dealId: 'd1', dealType: 'daily-deal', barcode: 'b', redemptionCode: 'r', expiresAt, issuedAt: now.toISOString() },
});
const redeem = (partnerId = 'a', userId?: string) => ({ type: 'RedeemCoupon' as const, data: { couponId: 'c1', partnerId, userId } });

describe('coupon decider', () => {
  it('redeems a valid coupon, once', () => {
    given([issued()]).when(redeem(), now).then([{ type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt: now.toISOString() } }]);
    given([issued(), { type: 'CouponRedeemed', data: { couponId: 'c1', redeemedAt: now.toISOString() } }]).when(redeem(), now).thenThrows(ValidationFailed, { message: 'state is already redeemed' });
  });
  it('refuses an expired coupon', () => given([issued('2026-06-01T00:00:00Z')]).when(redeem(), now).thenThrows(ValidationFailed, { message: 'state has expired' }));
  it("does not find another partner's or another user's coupon", () => {
    given([issued()]).when(redeem('b'), now).thenThrows(NotFound);
    given([issued()]).when(redeem('a', 'u2'), now).thenThrows(NotFound);
    given([]).when(redeem(), now).thenThrows(NotFound);
  });
  it('is issued once', () => given([issued()]).when({ type: 'IssueCoupon', data: issued().data as never }, now).then([]));
});
