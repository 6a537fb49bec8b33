import { createHash } from 'node:crypto';

export interface CouponCodes {
  barcode: string;
  redemptionCode: string;
}

/**
 * A coupon's barcode (13 digits) and redemption code (10 letters and digits, no look-alikes),
 * derived from its id so that a retried issue gives the same codes.
 */
export function couponCodes(couponId: string): CouponCodes {
  const digest = createHash('sha256').update(`coupon:${couponId}`).digest();
  const digits = [...digest.subarray(0, 12)].map((b) => b % 10);
  const check = (10 - (digits.reduce((sum, d, i) => sum + d * (i % 2 ? 3 : 1), 0) % 10)) % 10;
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const code = [...digest.subarray(12, 22)].map((b) => alphabet[b % alphabet.length]).join('');
  return { barcode: [...digits, check].join(''), redemptionCode: code };
}
