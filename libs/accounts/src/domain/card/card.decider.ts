import { Decider, DomainCommand, ValidationFailed } from '@deals/kernel';
import { CardEvent, CardStored } from './card.events';

export type StoreCard = DomainCommand<'StoreCard', CardStored['data']>;

export interface Card {
  stored: boolean;
  partnerId: string | null;
  userId: string | null;
}

export const cardDecider: Decider<Card, StoreCard, CardEvent> = {
  initialState: () => ({ stored: false, partnerId: null, userId: null }),
  decide(command, card) {
    // The same card for the same user again, under the id its claim names (calls at once): stored already.
    if (card.stored && card.partnerId === command.data.partnerId && card.userId === command.data.userId) return [];
    if (card.stored) throw new ValidationFailed([{ type: 'invalid', resource: 'credit_card', field: 'id', message: 'is already stored' }]);
    return [{ type: 'CardStored', data: command.data }];
  },
  evolve: (_card, event) => ({ stored: true, partnerId: event.data.partnerId, userId: event.data.userId }),
};
