import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { couponCodes } from './coupon-codes';

const secret = Buffer.alloc(32, 7);

describe('couponCodes', () => {
  it('gives the codes coupons were issued with: they are derived again on retries and recovery, so they must never change', () => {
    expect(couponCodes('p1-1', secret)).toEqual({ barcode: '6146304462909', redemptionCode: '45AWS2C3NU' });
    expect(couponCodes('K7QX2M9PWDabc-2', secret)).toEqual({ barcode: '0026024177689', redemptionCode: 'GR5CVLQFHM' });
    expect(couponCodes('purchase-42-10', secret)).toEqual({ barcode: '2214405598446', redemptionCode: '7EFJFXT86H' });
  });

  it("cannot be worked out from the coupon id without the installation's secret", () => {
    // Before session 13: an unkeyed SHA-256 of the id, which anyone who saw a purchase id could compute.
    const unkeyed = createHash('sha256').update('coupon:p1-1').digest();
    expect(couponCodes('p1-1', secret).barcode.slice(0, 12)).not.toBe([...unkeyed.subarray(0, 12)].map((b) => b % 10).join(''));
    expect(couponCodes('p1-1', Buffer.alloc(32, 8))).not.toEqual(couponCodes('p1-1', secret));
  });

  it('gives a 13-digit barcode whose last digit checks the others (weights 1, 3), and 10 characters without look-alikes', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (couponId) => {
        const { barcode, redemptionCode } = couponCodes(couponId, secret);
        expect(barcode).toMatch(/^[0-9]{13}$/);
        const weighted = [...barcode].reduce((sum, d, i) => sum + Number(d) * (i % 2 ? 3 : 1), 0);
        expect(weighted % 10).toBe(0);
        expect(redemptionCode).toMatch(/^[A-HJ-NP-Z2-9]{10}$/);
        expect(couponCodes(couponId, secret)).toEqual({ barcode, redemptionCode });
      }),
    );
  });
});
