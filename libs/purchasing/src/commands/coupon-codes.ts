import { hash } from 'node:crypto';

export interface CouponCodes {
  barcode: string;
  redemptionCode: string;
}

/**
 * A coupon's barcode (13 digits) and redemption code (10 letters and digits, no look-alikes),
 * derived from its id so that a retried issue gives the same codes.
 */
export function couponCodes(couponId: string): CouponCodes {
  // One call, no Hash object (crypto.hash, Node 20.12+): a purchase computes its coupons' codes on the event loop.
  const digest = hash('sha256', `coupon:${couponId}`, 'buffer');
  let barcode = '';
  let weighted = 0;
  for (let i = 0; i < 12; i++) {
    const digit = digest[i] % 10;
    barcode += digit;
    weighted += digit * (i % 2 ? 3 : 1);
  }
  barcode += (10 - (weighted % 10)) % 10;
  let code = '';
  for (let i = 12; i < 22; i++) code += ALPHABET[digest[i] % ALPHABET.length];
  return { barcode, redemptionCode: code };
}

/** Redemption codes' characters: capitals and digits without look-alikes (no I, O, 0, 1). */
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
