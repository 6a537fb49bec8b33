import type { DomainEvent } from '@deals/kernel';

/**
 * A card as the service keeps it: the processor's token, brand, last four digits and expiry. The
 * fingerprint (a peppered slow hash of the number) recognises the same card again; the number and
 * the CVV are never kept.
 */
export type CardStored = DomainEvent<
  'CardStored',
  {
    cardId: string;
    partnerId: string;
    userId: string;
    token: string;
    brand: string;
    last4: string;
    expMonth: number;
    expYear: number;
    zipCode: string;
    fingerprint: string;
    storedAt: string;
  }
>;
/**
 * The same card stored again with another expiry or zip code (a reissued card keeps its number):
 * the new details, and the token the processor gave for them, replace the old ones.
 */
export type CardRenewed = DomainEvent<
  'CardRenewed',
  { cardId: string; token: string; expMonth: number; expYear: number; zipCode: string; renewedAt: string }
>;
export type CardEvent = CardStored | CardRenewed;

export const cardStream = (cardId: string) => `card-${cardId}`;
