import { Decider, DomainCommand, DomainEvent } from '@deals/kernel';
import { ResaleBuyer, resaleTransactionKey } from './resale-buyer';

/** What a reseller's sale records beside its deal and quantity: taken from one body only. */
export interface ResaleTerms {
  amountCents: number;
  transactionDate: string;
  /** Personal data: encrypted in the log under the buyer's own key (see `resale-buyer.ts`). */
  buyer: ResaleBuyer;
}

/**
 * `dealId`, `quantity` and `terms` (each absent from the oldest events): the sale the claiming
 * request asked for. A repeat sent while the first is still being recorded completes that sale,
 * whatever its own body names; where they are absent, the repeat's body is used.
 */
export type TransactionReferenceClaimed = DomainEvent<
  'TransactionReferenceClaimed',
  { partnerId: string; transactionReference: string; purchaseId: string; dealId?: string; quantity?: number; terms?: ResaleTerms }
>;
/** The claimed sale got its units: from here it is recorded, and the claim can no longer be given up. */
export type TransactionReferenceSelling = DomainEvent<'TransactionReferenceSelling', { purchaseId: string }>;
/** The claimed sale was refused (sold out, not on sale…): the reference is free for a new sale. */
export type TransactionReferenceReleased = DomainEvent<'TransactionReferenceReleased', { purchaseId: string; reason: string }>;
export type TransactionReferenceEvent = TransactionReferenceClaimed | TransactionReferenceSelling | TransactionReferenceReleased;

export type ClaimTransactionReference = DomainCommand<'ClaimTransactionReference', TransactionReferenceClaimed['data']>;
export type MarkResaleSelling = DomainCommand<'MarkResaleSelling', { purchaseId: string }>;
export type ReleaseTransactionReference = DomainCommand<'ReleaseTransactionReference', { purchaseId: string; reason: string }>;
export type TransactionReferenceCommand = ClaimTransactionReference | MarkResaleSelling | ReleaseTransactionReference;

/**
 * A reseller's `transaction_reference` is unique per partner: the first purchase recorded under it
 * owns the reference stream, and a repeat finds that purchase there instead of recording another.
 */
export const transactionReferenceStream = (partnerId: string, reference: string) =>
  `resellertx-${resaleTransactionKey(partnerId, reference)}`;

export interface TransactionReferenceClaim {
  purchaseId: string | null;
  dealId: string | null;
  quantity: number | null;
  terms: ResaleTerms | null;
  /** free: never claimed, or given up after a refusal; claimed: being decided; selling: its units taken. */
  status: 'free' | 'claimed' | 'selling';
}

/**
 * The claim was given up (its sale refused) or passed to another sale while this request was taking
 * its units: they must be given back, and the request starts again with a claim of its own.
 */
export class ResaleClaimSuperseded extends Error {}

/**
 * Claim, then either mark selling (the units are held) or release (the sale was refused). Both
 * are decided on the stream as written, so of a refusal and a hold that race, one wins: a
 * refusal that comes first frees the reference and the hold is given back; a hold that comes
 * first keeps it, and the refusal gives up nothing.
 */
export const transactionReferenceDecider: Decider<TransactionReferenceClaim, TransactionReferenceCommand, TransactionReferenceEvent> = {
  initialState: () => ({ purchaseId: null, dealId: null, quantity: null, terms: null, status: 'free' }),
  decide(command, claim) {
    switch (command.type) {
      case 'ClaimTransactionReference':
        return claim.status === 'free' ? [{ type: 'TransactionReferenceClaimed', data: command.data }] : [];
      case 'MarkResaleSelling':
        if (claim.purchaseId !== command.data.purchaseId || claim.status === 'free')
          throw new ResaleClaimSuperseded('the claim of the purchase was given up');
        return claim.status === 'selling' ? [] : [{ type: 'TransactionReferenceSelling', data: { purchaseId: command.data.purchaseId } }];
      case 'ReleaseTransactionReference':
        return claim.purchaseId === command.data.purchaseId && claim.status === 'claimed'
          ? [{ type: 'TransactionReferenceReleased', data: command.data }]
          : [];
    }
  },
  evolve(claim, event) {
    switch (event.type) {
      case 'TransactionReferenceClaimed':
        return {
          purchaseId: event.data.purchaseId,
          dealId: event.data.dealId ?? null,
          quantity: event.data.quantity ?? null,
          terms: event.data.terms ?? null,
          status: 'claimed',
        };
      case 'TransactionReferenceSelling':
        return { ...claim, status: 'selling' };
      case 'TransactionReferenceReleased':
        return { ...claim, status: 'free' };
    }
  },
};
