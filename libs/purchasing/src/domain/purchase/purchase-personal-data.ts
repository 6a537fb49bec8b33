import type { PersonalFields } from '@deals/kernel';

/** Where purchases keep a user's personal data: a card purchase's shipping address, encrypted under its buyer's key in the log. */
export const PURCHASES_PERSONAL_FIELDS: PersonalFields = new Map([
  ['PurchaseReserved', { owner: (data) => (data.payment as { userId?: string } | undefined)?.userId ?? null, paths: [['shipping']] }],
]);
