import { applyEvents, RecordedEvent } from '@deals/kernel';
import { CouponDetails, couponDetailsProjection } from './coupon-details.projection';

let n = 0;
const recorded = (type: string, data: unknown): RecordedEvent => ({
  id: `e${++n}`,
  type,
  data,
  metadata: { occurredAt: '2026-06-15T12:00:00Z' },
  streamId: 'coupon-p1-1',
  revision: 0,
  position: String(n).padStart(20, '0'),
});
const issued = recorded('CouponIssued', {
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
});
const expired = recorded('CouponExpired', { couponId: 'p1-1', expiredAt: '2026-06-15T12:00:00.000Z' });

function fold(events: RecordedEvent[], views = new Map<string, CouponDetails>()): Map<string, CouponDetails> {
  for (const event of events) for (const view of applyEvents(couponDetailsProjection, views, [event])) views.set(view._id, view);
  return views;
}

describe('coupon details projection: the recorded expiry', () => {
  it('keeps the expiry as epoch ms, not recorded at issue, recorded once CouponExpired is applied', () => {
    expect(fold([issued]).get('p1-1')).toMatchObject({ expiresAt: Date.parse('2026-06-15T12:00:00Z'), expiryRecorded: false });
    expect(fold([issued, expired]).get('p1-1')).toMatchObject({
      expiryRecorded: true,
      redeemedAt: null,
      cancelledAt: null,
      _pos: expired.position,
    });
  });

  it('changes nothing when the events are applied again', () => {
    const views = fold([issued, expired]);
    const before = structuredClone(views.get('p1-1'));
    expect(applyEvents(couponDetailsProjection, views, [issued, expired])).toEqual([]);
    expect(views.get('p1-1')).toEqual(before);
  });
});
