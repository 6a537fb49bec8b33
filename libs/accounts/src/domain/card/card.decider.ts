import { Decider, DomainCommand, ValidationFailed } from '@deals/kernel';
import { CardEvent, CardStored } from './card.events';

export type StoreCard = DomainCommand<'StoreCard', CardStored['data']>;

export interface Card {
  stored: boolean;
  partnerId: string | null;
  userId: string | null;
  /** The details a purchase is charged with: `MM/YYYY zip`. */
  details: string | null;
}

const detailsOf = (data: { expMonth: number; expYear: number; zipCode: string }) => `${data.expMonth}/${data.expYear} ${data.zipCode}`;

export const cardDecider: Decider<Card, StoreCard, CardEvent> = {
  initialState: () => ({ stored: false, partnerId: null, userId: null, details: null }),
  decide(command, card) {
    const { data } = command;
    if (card.stored && (card.partnerId !== data.partnerId || card.userId !== data.userId)) {
      throw new ValidationFailed([{ type: 'invalid', resource: 'credit_card', field: 'id', message: 'is already stored' }]);
    }
    if (!card.stored) return [{ type: 'CardStored', data }];
    // The same card for the same user again (under the id its claim names): stored already; with
    // a new expiry or zip code (a reissued card), those and their token replace the old ones.
    if (card.details === detailsOf(data)) return [];
    return [{ type: 'CardRenewed', data: { cardId: data.cardId, token: data.token, expMonth: data.expMonth, expYear: data.expYear, zipCode: data.zipCode, renewedAt: data.storedAt } }];
  },
  evolve: (card, event) =>
    event.type === 'CardStored'
      ? { stored: true, partnerId: event.data.partnerId, userId: event.data.userId, details: detailsOf(event.data) }
      : { ...card, details: detailsOf(event.data) },
};
