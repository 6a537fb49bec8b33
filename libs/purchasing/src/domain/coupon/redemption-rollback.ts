/** Why a redemption is rolled back. */
export const ROLLBACK_REASONS = ['redeemed_by_mistake', 'wrong_coupon', 'not_provided', 'duplicate_scan', 'other'] as const;
export type RollbackReason = (typeof ROLLBACK_REASONS)[number];

export const MAX_ROLLBACK_NOTE = 500;
