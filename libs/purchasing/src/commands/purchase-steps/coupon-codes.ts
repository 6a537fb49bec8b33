import { createHmac } from 'node:crypto';

export interface CouponCodes {
  barcode: string;
  redemptionCode: string;
}

/**
 * The installation's secret the codes are derived under (`DATA_DIR/secrets/coupon-codes.key`). A
 * coupon id is its purchase's id and a number, and purchase ids travel (addresses, logs, error
 * bodies, the audit): codes derived from the id alone could be worked out by anyone who saw one.
 */
export abstract class CouponCodeKey {
  abstract readonly secret: Buffer;
}

/**
 * A coupon's barcode (13 digits) and redemption code (10 letters and digits, no look-alikes):
 * HMAC-SHA256 of its id under the installation's secret, so that a retried issue gives the same
 * codes and nobody without the secret can work them out. (Before session 13 they were an unkeyed
 * hash of the id; coupons issued then keep theirs, which their events hold.)
 */
export function couponCodes(couponId: string, secret: Buffer): CouponCodes {
  const digest = createHmac('sha256', secret).update(`coupon:${couponId}`).digest();
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
