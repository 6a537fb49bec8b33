import { Decider, DomainCommand, ignoredEvent, unknownCommand, ValidationFailed } from '@deals/kernel';
import { CardEvent, CardStored } from './card.events';

export type StoreCard = DomainCommand<'StoreCard', CardStored['data']>;

/** A card's stream: none yet, or the card stored for a partner's user. */
export type Card = { status: 'none' } | StoredCard;

export interface StoredCard {
  status: 'stored';
  partnerId: string;
  userId: string;
  /** The details a purchase is charged with: `MM/YYYY zip`. */
  details: string;
  /** Its expiry as a month count (year × 12 + month), to tell a reissue from an old form. */
  expiry: number;
}

type Details = { expMonth: number; expYear: number; zipCode: string };
const detailsOf = (data: Details) => `${data.expMonth}/${data.expYear} ${data.zipCode}`;
const expiryOf = (data: Details) => data.expYear * 12 + data.expMonth;

export const cardDecider: Decider<Card, StoreCard, CardEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, card) {
    switch (command.type) {
      case 'StoreCard': {
        const { data } = command;
        if (card.status === 'none') return [{ type: 'CardStored', data }];
        if (card.partnerId !== data.partnerId || card.userId !== data.userId) {
          throw new ValidationFailed([{ type: 'invalid', resource: 'credit_card', field: 'id', message: 'is already stored' }]);
        }
        // The same card for the same user again (under the id its claim names): stored already. A
        // later expiry (a reissued card), or a new zip code with the same expiry, replaces the details
        // and the token; an earlier expiry is an old form or a stale retry, and changes nothing.
        if (card.details === detailsOf(data) || expiryOf(data) < card.expiry) return [];
        const { cardId, token, expMonth, expYear, zipCode, storedAt } = data;
        return [{ type: 'CardRenewed', data: { cardId, token, expMonth, expYear, zipCode, renewedAt: storedAt } }];
      }
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(card, event) {
    switch (event.type) {
      case 'CardStored': {
        const { partnerId, userId } = event.data;
        return { status: 'stored', partnerId, userId, details: detailsOf(event.data), expiry: expiryOf(event.data) };
      }
      case 'CardRenewed':
        // A renewal follows the card's storing (one before it is none the decider wrote, and is ignored).
        return card.status === 'stored' ? { ...card, details: detailsOf(event.data), expiry: expiryOf(event.data) } : card;
      default:
        return ignoredEvent(event, card);
    }
  },
};
