import { ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { cardDecider } from './card.decider';
import { CardRenewed, CardStored } from './card.events';

const given = deciderSpec(cardDecider);
const now = new Date('2026-06-15T12:00:00Z');
const details: CardStored['data'] = {
  cardId: 'c1',
  partnerId: 'a',
  userId: 'u1',
  token: 'tok_1',
  brand: 'Visa',
  last4: '4242',
  expMonth: 12,
  expYear: 2030,
  zipCode: '60601',
  fingerprint: 'f1',
  storedAt: now.toISOString(),
};
const stored: CardStored = { type: 'CardStored', data: details };
const store = (change: Partial<CardStored['data']> = {}) => ({ type: 'StoreCard' as const, data: { ...details, ...change } });

describe('card decider', () => {
  it('stores a new card', () => {
    given([]).when(store(), now).then([stored]);
  });
  it('answers the same card with the same details for the same user with nothing, whatever the new token', () => {
    given([stored])
      .when(store({ token: 'tok_2' }), now)
      .then([]);
  });
  it('renews the card stored again with a new expiry or zip code, with the new token', () => {
    const renewed: CardRenewed = {
      type: 'CardRenewed',
      data: { cardId: 'c1', token: 'tok_2', expMonth: 3, expYear: 2033, zipCode: '60601', renewedAt: '2026-07-01T00:00:00.000Z' },
    };
    given([stored])
      .when(store({ token: 'tok_2', expMonth: 3, expYear: 2033, storedAt: '2026-07-01T00:00:00.000Z' }), now)
      .then([renewed]);
    given([stored])
      .when(store({ zipCode: '60602' }), now)
      .then([
        {
          type: 'CardRenewed',
          data: { cardId: 'c1', token: 'tok_1', expMonth: 12, expYear: 2030, zipCode: '60602', renewedAt: now.toISOString() },
        },
      ]);
    // Renewed once, the same new details again change nothing.
    given([stored, renewed])
      .when(store({ expMonth: 3, expYear: 2033 }), now)
      .then([]);
  });
  it('keeps the details when the card comes again with an earlier expiry (an old form, a stale retry), whatever its zip code', () => {
    given([stored])
      .when(store({ token: 'tok_2', expMonth: 11, expYear: 2030 }), now)
      .then([]);
    given([stored])
      .when(store({ token: 'tok_2', expYear: 2029, zipCode: '60602' }), now)
      .then([]);
  });
  it('refuses the id for another user or partner', () => {
    given([stored])
      .when(store({ userId: 'u2' }), now)
      .thenThrows(ValidationFailed);
    given([stored])
      .when(store({ partnerId: 'b' }), now)
      .thenThrows(ValidationFailed);
  });
});
