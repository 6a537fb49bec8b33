import { NotFound } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { SubscriptionEvent, subscriptionDecider, SubscriptionTerms } from './subscription.decider';

const now = new Date('2026-06-15T12:00:00Z');
const at = now.toISOString();
const given = deciderSpec(subscriptionDecider);
const terms: SubscriptionTerms = {
  subscriptionId: 'm1',
  partnerId: 'p1',
  userId: 'u1',
  regionId: 'boston',
  regionName: 'Boston',
  zip: '02134',
  confirmed: true,
  source: null,
};
const started: SubscriptionEvent = { type: 'SubscriptionStarted', data: { ...terms, createdAt: 'x' } };
const set = (status: 'active' | 'inactive', who: { partnerId?: string; userId?: string } = {}) => ({
  type: 'SetSubscriptionStatus' as const,
  data: { subscriptionId: 'm1', partnerId: 'p1', status, ...who },
});

describe('subscription decider', () => {
  it('starts once; subscribing again reactivates an inactive one, else changes nothing', () => {
    given([])
      .when({ type: 'Subscribe', data: terms }, now)
      .then([{ type: 'SubscriptionStarted', data: { ...terms, createdAt: at } }]);
    given([started]).when({ type: 'Subscribe', data: terms }, now).then([]);
    const off: SubscriptionEvent = { type: 'SubscriptionStatusChanged', data: { subscriptionId: 'm1', status: 'inactive', at: 'y' } };
    given([started, off])
      .when({ type: 'Subscribe', data: terms }, now)
      .then([{ type: 'SubscriptionStatusChanged', data: { subscriptionId: 'm1', status: 'active', at } }]);
  });

  it('sets the status; the same status changes nothing', () => {
    given([started])
      .when(set('inactive'), now)
      .then([{ type: 'SubscriptionStatusChanged', data: { subscriptionId: 'm1', status: 'inactive', at } }]);
    given([started]).when(set('active'), now).then([]);
  });

  it("is not found before it starts, for another partner, or another user's token", () => {
    given([]).when(set('inactive'), now).thenThrows(NotFound);
    given([started])
      .when(set('inactive', { partnerId: 'p2' }), now)
      .thenThrows(NotFound);
    given([started])
      .when(set('inactive', { userId: 'u2' }), now)
      .thenThrows(NotFound);
    given([started])
      .when(set('inactive', { userId: 'u1' }), now)
      .then([expect.objectContaining({ type: 'SubscriptionStatusChanged' })] as never);
  });
});
