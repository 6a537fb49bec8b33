import { Decider, DomainCommand, DomainEvent, unknownCommand } from '@deals/kernel';
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

/**
 * `free`: never claimed, or given up after a refusal. `claimed`: the sale of `purchaseId` is being
 * decided; `selling`: its units were taken. `dealId`, `quantity` and `terms` are null where the
 * claiming event is of the oldest, which had none.
 */
export type TransactionReferenceClaim =
  | { status: 'free' }
  | { status: 'claimed' | 'selling'; purchaseId: string; dealId: string | null; quantity: number | null; terms: ResaleTerms | null };

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
  initialState: () => ({ status: 'free' }),
  decide(command, claim) {
    const { purchaseId } = command.data;
    const claimedBy = claim.status !== 'free' && claim.purchaseId === purchaseId;
    switch (command.type) {
      case 'ClaimTransactionReference':
        return claim.status === 'free' ? [{ type: 'TransactionReferenceClaimed', data: command.data }] : [];
      case 'MarkResaleSelling':
        if (!claimedBy) throw new ResaleClaimSuperseded('the claim of the purchase was given up');
        return claim.status === 'selling' ? [] : [{ type: 'TransactionReferenceSelling', data: { purchaseId } }];
      case 'ReleaseTransactionReference':
        return claimedBy && claim.status === 'claimed' ? [{ type: 'TransactionReferenceReleased', data: command.data }] : [];
      default:
        return unknownCommand(command);
    }
  },
  evolve(claim, event) {
    switch (event.type) {
      case 'TransactionReferenceClaimed': {
        const { purchaseId, dealId, quantity, terms } = event.data;
        return { status: 'claimed', purchaseId, dealId: dealId ?? null, quantity: quantity ?? null, terms: terms ?? null };
      }
      case 'TransactionReferenceSelling':
        // Only a claimed reference is marked selling.
        return claim.status === 'free' ? claim : { ...claim, status: 'selling' };
      case 'TransactionReferenceReleased':
        return { status: 'free' };
      default: {
        const unhandled: never = event;
        return unhandled;
      }
    }
  },
};
