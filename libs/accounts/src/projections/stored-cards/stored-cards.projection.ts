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
  /** Absent from documents of an older version of this view (a rebuild fills it in). */
  zipCode?: string;
  fingerprint: string;
  token: string;
  deleted: boolean;
  storedAt: string;
}

export const STORED_CARDS = 'stored_cards';

export const storedCardsProjection = defineProjection<StoredCard>({
  name: STORED_CARDS,
  handles: ['CardStored', 'CardRenewed'],
  indexes: [{ keys: { userId: 1 } }, { keys: { partnerId: 1 } }, { keys: { fingerprint: 1 } }],
  documentIds: (event) => [(event.data as { cardId: string }).cardId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as CardEvent;
    if (event.type === 'CardRenewed') {
      if (!view) return null;
      const { token, expMonth, expYear, zipCode } = event.data;
      return { ...view, _pos: recorded.position, token, expMonth, expYear, zipCode };
    }
    const { partnerId, userId, brand, last4, expMonth, expYear, zipCode, fingerprint, token, storedAt } = event.data;
    return {
      _id: id,
      _pos: recorded.position,
      partnerId,
      userId,
      brand,
      last4,
      expMonth,
      expYear,
      zipCode,
      fingerprint,
      token,
      deleted: false,
      storedAt,
    };
  },
});
