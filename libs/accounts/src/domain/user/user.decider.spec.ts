import { NotFound, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { userDecider } from './user.decider';
import { UserEvent } from './user.events';

const given = deciderSpec(userDecider);
const now = new Date('2026-06-15T12:00:00Z');
const registered: UserEvent = {
  type: 'UserRegistered',
  data: {
    userId: 'u1',
    partnerId: 'a',
    credits: 0,
    sessionId: null,
    registeredAt: now.toISOString(),
    profile: {
      email: 'u1@example.com',
      firstName: null,
      lastName: null,
      birthday: null,
      postalCode: null,
      source: null,
      token: null,
      partnerData: {},
    },
  },
};
const deleted: UserEvent = { type: 'UserDeleted', data: { userId: 'u1' } };
const choose = (partnerId = 'a') => ({
  type: 'ChooseDefaultCard' as const,
  data: { userId: 'u1', partnerId, cardId: 'c1', onlyIfNone: false },
});
const update = (data: Record<string, unknown>) => ({
  type: 'UpdateUser' as const,
  data: { userId: 'u1', partnerId: 'a', changes: {}, ...data },
});

describe('user decider', () => {
  it('chooses a default card for a live user of the partner', () => {
    given([registered])
      .when(choose(), now)
      .then([{ type: 'DefaultCardChosen', data: { userId: 'u1', cardId: 'c1' } }]);
    given([registered]).when(choose('b'), now).thenThrows(NotFound);
  });
  it('refuses a deleted user everything but its restoring', () => {
    given([registered, deleted])
      .when(choose(), now)
      .thenThrows(ValidationFailed, { message: 'is_deleted the user is deleted: only is_deleted=false restores it' });
    given([registered, deleted])
      .when(update({ changes: { firstName: 'X' } }), now)
      .thenThrows(ValidationFailed);
    given([registered, deleted])
      .when(update({ deleted: false }), now)
      .then([{ type: 'UserRestored', data: { userId: 'u1' } }]);
    given([registered, deleted])
      .when(update({ deleted: true }), now)
      .then([]);
  });
});
