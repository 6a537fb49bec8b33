import { couponExpiry } from './coupon-issuer';

describe('couponExpiry', () => {
  const now = new Date('2026-06-15T12:00:00Z');
  it("is expiration_days after the purchase, but never after the deal's expires_at", () => {
    expect(couponExpiry({ expiresAt: '2026-12-31T23:59:00Z', expirationDays: 2 }, now)).toBe('2026-06-17T12:00:00.000Z');
    expect(couponExpiry({ expiresAt: '2026-06-16T00:00:00Z', expirationDays: 30 }, now)).toBe('2026-06-16T00:00:00Z');
  });
  it('is either alone when only one is set, and none when neither is', () => {
    expect(couponExpiry({ expiresAt: '2026-12-31T23:59:00Z', expirationDays: null }, now)).toBe('2026-12-31T23:59:00Z');
    expect(couponExpiry({ expiresAt: null, expirationDays: 10 }, now)).toBe('2026-06-25T12:00:00.000Z');
    expect(couponExpiry({ expiresAt: null, expirationDays: null }, now)).toBeNull();
  });
});
