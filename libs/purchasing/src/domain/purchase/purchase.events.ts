import type { DomainEvent } from '@deals/kernel';

/** What a purchase keeps of its deal at the time of sale (for its answers and for auditors). */
export interface DealSnapshot {
  dealId: string;
  title: string;
  type: string;
  imageUrl: string | null;
  unitPrice: number;
  expiresAt: string | null;
  expirationDays: number | null;
}

export type PurchaseReserved = DomainEvent<
  'PurchaseReserved',
  { purchaseId: string; partnerId: string; deal: DealSnapshot; quantity: number; holdId: string; reservedAt: string; holdExpiresAt: string }
>;
/** The partner processed the payment and names the user (part 3.2 claim). */
export type PurchaseClaimed = DomainEvent<
  'PurchaseClaimed',
  { purchaseId: string; userId: string; amountCents: number; holdId: string; couponIds: string[]; claimedAt: string }
>;
export type PurchaseReleased = DomainEvent<'PurchaseReleased', { purchaseId: string; reason: 'released' }>;

export type PurchaseEvent = PurchaseReserved | PurchaseClaimed | PurchaseReleased;

export const purchaseStream = (purchaseId: string) => `purchase-${purchaseId}`;

/** Coupon ids of a purchase: derived, so a retried claim issues the same coupons, not new ones. */
export const couponIdsFor = (purchaseId: string, quantity: number) => Array.from({ length: quantity }, (_, i) => `${purchaseId}-${i + 1}`);
