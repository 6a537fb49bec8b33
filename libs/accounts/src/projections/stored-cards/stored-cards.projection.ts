import { defineProjection, ViewDocument } from '@deals/kernel';
import type { CardEvent } from '../../domain/card/card.events';

/** "Which cards has user X stored?" Masked: brand, last four digits, expiry. */
export interface StoredCard extends ViewDocument {
  partnerId: string;
  userId: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  fingerprint: string;
  token: string;
  deleted: boolean;
  storedAt: string;
}

export const STORED_CARDS = 'stored_cards';

export const storedCardsProjection = defineProjection<StoredCard>({
  name: STORED_CARDS,
  handles: ['CardStored'],
  indexes: [{ keys: { userId: 1 } }, { keys: { partnerId: 1 } }, { keys: { fingerprint: 1 } }],
  documentIds: (event) => [(event.data as { cardId: string }).cardId],
  evolve(_view, recorded, id) {
    const { partnerId, userId, brand, last4, expMonth, expYear, fingerprint, token, storedAt } = (recorded as unknown as CardEvent).data;
    return { _id: id, _pos: recorded.position, partnerId, userId, brand, last4, expMonth, expYear, fingerprint, token, deleted: false, storedAt };
  },
});
