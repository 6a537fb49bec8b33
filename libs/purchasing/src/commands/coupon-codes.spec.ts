import fc from 'fast-check';
import { couponCodes } from './coupon-codes';

describe('couponCodes', () => {
  it('gives the codes coupons were issued with: they are derived again on retries and recovery, so they must never change', () => {
    expect(couponCodes('p1-1')).toEqual({ barcode: '2990534591137', redemptionCode: 'XFNY79P67B' });
    expect(couponCodes('K7QX2M9PWDabc-2')).toEqual({ barcode: '0870858248028', redemptionCode: 'W53C7UNET8' });
    expect(couponCodes('purchase-42-10')).toEqual({ barcode: '8966465262723', redemptionCode: '2GXJ6YBHVR' });
  });

  it('gives a 13-digit barcode whose last digit checks the others (weights 1, 3), and 10 characters without look-alikes', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (couponId) => {
        const { barcode, redemptionCode } = couponCodes(couponId);
        expect(barcode).toMatch(/^[0-9]{13}$/);
        const weighted = [...barcode].reduce((sum, d, i) => sum + Number(d) * (i % 2 ? 3 : 1), 0);
        expect(weighted % 10).toBe(0);
        expect(redemptionCode).toMatch(/^[A-HJ-NP-Z2-9]{10}$/);
        expect(couponCodes(couponId)).toEqual({ barcode, redemptionCode });
      }),
    );
  });
});
