import type { CannotFulfil } from '@deals/kernel';
import type { ReservePurchase } from '../purchase/purchase.decider';
import type { DealSnapshot } from '../purchase/purchase.events';
import type { ClaimTransactionReference, ResaleClaimSuperseded, ResaleTerms } from '../purchase/resale-claim';

/** The inputs and commands of a reseller sale's start (`resale-start.ts`). */

type Caller = { partnerId: string };
type Nothing = Record<string, never>;

/** A deal as a resale reads it: its snapshot, and why its quantity is not sold now (null: it is). */
export interface ResoldDeal {
  snapshot: DealSnapshot;
  refusal: string | null;
}

/** A reseller's new sale (POST /api/v3/resellers/purchases), once its body is checked. */
export type ResaleRequested = {
  type: 'ResaleRequested';
  data: Caller & {
    /** The purchase's id, should the reference be this request's. */
    purchaseId: string;
    transactionReference: string;
    dealId: string;
    quantity: number;
    terms: ResaleTerms;
    /** Its deal, read before the claim: refused only once the claim is known to be this request's. */
    deal: ResoldDeal;
  };
};

/** What happens to a resale's start. */
export type ResaleStartInput =
  | { type: 'ReferenceClaimed'; data: Nothing }
  /** Claimed by a first request: its sale (its fields absent from the oldest claims), and whether its purchase is written. */
  | {
      type: 'ReferenceClaimedBefore';
      data: { purchaseId: string; dealId: string | null; quantity: number | null; terms: ResaleTerms | null; reserved: boolean };
    }
  /** The first request's deal, read again (null: it is gone). */
  | { type: 'ResaleDealChecked'; data: { deal: ResoldDeal | null } }
  /** The inventory refused the hold (sold out). */
  | { type: 'ResaleUnitsRefused'; data: { error: CannotFulfil } }
  /** The claim was given up or passed on before the sale's start was written. */
  | { type: 'ReferenceClaimSuperseded'; data: { error: ResaleClaimSuperseded } }
  | { type: 'ReferenceGivenUp'; data: Nothing }
  | { type: 'ResaleReserved'; data: Nothing };

export type OnReference = Caller & { transactionReference: string; purchaseId: string };

/** The commands of a resale's start; its transaction reference's are the decider's, on the reference's stream. */
export type ResaleStartCommand =
  | ClaimTransactionReference
  | { type: 'CheckResaleDeal'; data: { dealId: string; quantity: number } }
  /** The sale's start, one unit of work: the units held, the claim marked selling, the purchase reserved. */
  | {
      type: 'StartResale';
      data: { hold: { dealId: string; holdId: string; quantity: number }; mark: OnReference; reserve: ReservePurchase['data'] };
    }
  | { type: 'ReleaseTransactionReference'; data: OnReference & { reason: string } };
