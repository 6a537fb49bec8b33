import { createHash } from 'node:crypto';

/** What a reseller's sale says about its buyer, as the request names each field. */
export const RESALE_BUYER_FIELDS = [
  'first_name',
  'last_name',
  'address_type',
  'address1',
  'address2',
  'postal_code',
  'city',
  'state',
  'country',
  'telephone',
] as const;

export type ResaleBuyerField = (typeof RESALE_BUYER_FIELDS)[number];

/**
 * The buyer of a reseller's sale: the fields its body gave (a card-linked sale may give none). Each
 * reads null once the buyer was erased (their key deleted).
 */
export type ResaleBuyer = { [F in ResaleBuyerField]?: string | null };

/** A partner's transaction, named by its `transaction_reference`: a hash, so the name holds no reference in clear. */
export const resaleTransactionKey = (partnerId: string, reference: string) =>
  createHash('sha256').update(`${partnerId}\n${reference}`).digest('hex').slice(0, 40);

/**
 * Whose key encrypts a reseller sale's buyer in the log: the partner's transaction, so every
 * event that carries the buyer (each claim of the reference, the sale) is under one key, and
 * erasing the buyer deletes it. Prefixed: never a user's id.
 */
export const resaleBuyerSubject = (partnerId: string, reference: string) => `resale-buyer:${resaleTransactionKey(partnerId, reference)}`;
