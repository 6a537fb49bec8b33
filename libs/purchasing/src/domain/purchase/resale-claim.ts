import { Decider, DomainCommand, DomainEvent } from '@deals/kernel';
import { createHash } from 'node:crypto';

export type TransactionReferenceClaimed = DomainEvent<'TransactionReferenceClaimed', { partnerId: string; transactionReference: string; purchaseId: string }>;
export type ClaimTransactionReference = DomainCommand<'ClaimTransactionReference', TransactionReferenceClaimed['data']>;

/**
 * A reseller's `transaction_reference` is unique per partner: the first purchase recorded under it
 * owns the reference stream, and a repeat finds that purchase there instead of recording another.
 */
export const transactionReferenceStream = (partnerId: string, reference: string) =>
  `resellertx-${createHash('sha256').update(`${partnerId}\n${reference}`).digest('hex').slice(0, 40)}`;

export const transactionReferenceDecider: Decider<{ purchaseId: string | null }, ClaimTransactionReference, TransactionReferenceClaimed> = {
  initialState: () => ({ purchaseId: null }),
  decide: (command, claim) => (claim.purchaseId ? [] : [{ type: 'TransactionReferenceClaimed', data: command.data }]),
  evolve: (_claim, event) => ({ purchaseId: event.data.purchaseId }),
};
