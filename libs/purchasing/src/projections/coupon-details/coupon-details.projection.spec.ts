import { projectionSpec } from '@deals/testing';
import { couponDetailsProjection } from './coupon-details.projection';

const spec = projectionSpec(couponDetailsProjection, { streamId: 'coupon-p1-1', occurredAt: '2026-06-15T12:00:00Z' });
const issued = {
  type: 'CouponIssued',
  data: {
    couponId: 'p1-1',
    purchaseId: 'p1',
    partnerId: 'a',
    userId: 'u1',
    dealId: 'd1',
    dealType: 'daily-deal',
    barcode: 'b',
    redemptionCode: 'r',
    expiresAt: '2026-06-15T12:00:00Z',
    issuedAt: '2026-06-01T12:00:00Z',
  },
};
const expired = { type: 'CouponExpired', data: { couponId: 'p1-1', expiredAt: '2026-06-15T12:00:00.000Z' } };

describe('coupon details projection: the recorded expiry', () => {
  it('keeps the expiry as epoch ms, not recorded at issue, recorded once CouponExpired is applied', () => {
    spec.given(issued).thenDocumentMatches('p1-1', { expiresAt: Date.parse('2026-06-15T12:00:00Z'), expiryRecorded: false });
    const after = spec.given(issued, expired);
    after.thenDocumentMatches('p1-1', { expiryRecorded: true, redeemedAt: null, cancelledAt: null, _pos: after.positionOf(expired) });
  });

  it('changes nothing when the events are applied again', () => {
    spec.given(issued, expired).thenReplayChangesNothing();
  });
});
