import { Decider, DomainCommand, ValidationFailed } from '@deals/kernel';
import { CardEvent, CardStored } from './card.events';

export type StoreCard = DomainCommand<'StoreCard', CardStored['data']>;

export interface Card {
  stored: boolean;
  partnerId: string | null;
  userId: string | null;
  /** The details a purchase is charged with: `MM/YYYY zip`. */
  details: string | null;
  /** Its expiry as a month count (year × 12 + month), to tell a reissue from an old form. */
  expiry: number;
}

type Details = { expMonth: number; expYear: number; zipCode: string };
const detailsOf = (data: Details) => `${data.expMonth}/${data.expYear} ${data.zipCode}`;
const expiryOf = (data: Details) => data.expYear * 12 + data.expMonth;

export const cardDecider: Decider<Card, StoreCard, CardEvent> = {
  initialState: () => ({ stored: false, partnerId: null, userId: null, details: null, expiry: 0 }),
  decide(command, card) {
    const { data } = command;
    if (card.stored && (card.partnerId !== data.partnerId || card.userId !== data.userId)) {
      throw new ValidationFailed([{ type: 'invalid', resource: 'credit_card', field: 'id', message: 'is already stored' }]);
    }
    if (!card.stored) return [{ type: 'CardStored', data }];
    // The same card for the same user again (under the id its claim names): stored already. A
    // later expiry (a reissued card), or a new zip code with the same expiry, replaces the details
    // and the token; an earlier expiry is an old form or a stale retry, and changes nothing.
    if (card.details === detailsOf(data) || expiryOf(data) < card.expiry) return [];
    return [
      {
        type: 'CardRenewed',
        data: {
          cardId: data.cardId,
          token: data.token,
          expMonth: data.expMonth,
          expYear: data.expYear,
          zipCode: data.zipCode,
          renewedAt: data.storedAt,
        },
      },
    ];
  },
  evolve: (card, event) =>
    event.type === 'CardStored'
      ? {
          stored: true,
          partnerId: event.data.partnerId,
          userId: event.data.userId,
          details: detailsOf(event.data),
          expiry: expiryOf(event.data),
        }
      : { ...card, details: detailsOf(event.data), expiry: expiryOf(event.data) },
};
