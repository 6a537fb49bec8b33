import { Decider, DomainCommand, DomainEvent } from '@deals/kernel';
import { createHash } from 'node:crypto';

/**
 * `dealId` and `quantity`: what the first sale under the reference buys (absent from events before
 * session 11). A repeat sent while the first is still being recorded completes that sale, whatever
 * its own body names.
 */
export type TransactionReferenceClaimed = DomainEvent<
  'TransactionReferenceClaimed',
  { partnerId: string; transactionReference: string; purchaseId: string; dealId?: string; quantity?: number }
>;
export type ClaimTransactionReference = DomainCommand<'ClaimTransactionReference', TransactionReferenceClaimed['data']>;

/**
 * A reseller's `transaction_reference` is unique per partner: the first purchase recorded under it
 * owns the reference stream, and a repeat finds that purchase there instead of recording another.
 */
export const transactionReferenceStream = (partnerId: string, reference: string) =>
  `resellertx-${createHash('sha256').update(`${partnerId}\n${reference}`).digest('hex').slice(0, 40)}`;

export interface TransactionReferenceClaim {
  purchaseId: string | null;
  dealId: string | null;
  quantity: number | null;
}

export const transactionReferenceDecider: Decider<TransactionReferenceClaim, ClaimTransactionReference, TransactionReferenceClaimed> = {
  initialState: () => ({ purchaseId: null, dealId: null, quantity: null }),
  decide: (command, claim) => (claim.purchaseId ? [] : [{ type: 'TransactionReferenceClaimed', data: command.data }]),
  evolve: (_claim, event) => ({ purchaseId: event.data.purchaseId, dealId: event.data.dealId ?? null, quantity: event.data.quantity ?? null }),
};
