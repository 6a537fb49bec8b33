import type { ErasureEvents, PersonalFields, PersonalFieldsOf } from '@deals/kernel';
import { RESALE_BUYER_FIELDS, resaleBuyerSubject } from './resale-buyer';

/** The key of a reseller sale's buyer, from an event's partner and reference; none where the event names neither (the oldest sales). */
const resaleBuyerOf = (data: Record<string, unknown>): string | null =>
  typeof data.partnerId === 'string' && typeof data.transactionReference === 'string'
    ? resaleBuyerSubject(data.partnerId, data.transactionReference)
    : null;

/**
 * A reseller sale's buyer, under `at` in an event. An erased buyer's sale is still written (its
 * units are sold, its coupons issued): without the buyer.
 */
const ofResaleBuyer = (at: readonly string[]): PersonalFieldsOf => ({
  owner: resaleBuyerOf,
  paths: RESALE_BUYER_FIELDS.map((field) => [...at, field]),
  whenErased: 'drop',
});

/**
 * A card purchase's reservation is about its user; a gift's about its recipient, whose name and
 * message it carries (and where the goods are shipped): erasing the recipient erases them.
 */
const reservationSubject = (data: Record<string, unknown>): string | null =>
  (data.gift as { userId?: string } | undefined)?.userId ?? (data.payment as { userId?: string } | undefined)?.userId ?? null;

/**
 * Where purchases keep personal data, encrypted in the log: a card purchase's shipping address
 * under its user's key (a gift's, with its name and message, under its recipient's); a reseller
 * sale's buyer under the key of the partner's transaction.
 */
export const PURCHASES_PERSONAL_FIELDS: PersonalFields = new Map([
  ['PurchaseReserved', { owner: reservationSubject, paths: [['shipping'], ['gift', 'name'], ['gift', 'message']] }],
  ['TransactionReferenceClaimed', ofResaleBuyer(['terms', 'buyer'])],
  ['PurchaseResold', ofResaleBuyer(['buyer'])],
]);

/** The event that says a reseller sale's buyer was erased. */
export const PURCHASES_ERASURE_EVENTS: ErasureEvents = new Map([
  ['ResaleBuyerErased', (data) => resaleBuyerSubject(data.partnerId as string, data.transactionReference as string)],
]);
