import type { LogPosition } from '@deals/kernel';

/** What a purchase command answers: the purchase, and the log position its answer waits for in the views. */
export interface PurchaseOutcome {
  purchaseId: string;
  position: LogPosition | null;
}
