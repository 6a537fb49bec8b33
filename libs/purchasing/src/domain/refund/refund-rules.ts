/** Why a purchase is refunded: the reasons a partner may give (docs/decisions.md, "Refunds"). */
export const REFUND_REASONS = ['requested_by_customer', 'duplicate', 'fraudulent', 'merchant_unable_to_fulfil', 'expired_unused'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

/** The longest note a refund keeps, in characters. */
export const MAX_REFUND_NOTE = 500;

export type RefundState = 'pending' | 'succeeded' | 'failed';

/**
 * Each coupon's share of what the purchase was paid, in cents: the amount split evenly over its
 * coupons, the cents left over going one each to the first coupons in their order (`-1`, `-2`, ...).
 * The shares of all the coupons add up to the amount exactly, so refunds of some coupons at a time
 * never pay back a cent more or less than refunding them all at once.
 */
export function couponShares(amountCents: number, couponIds: readonly string[]): Map<string, number> {
  const n = couponIds.length;
  if (n === 0) return new Map();
  const base = Math.floor(amountCents / n);
  const left = amountCents - base * n;
  return new Map(couponIds.map((id, i) => [id, base + (i < left ? 1 : 0)]));
}
