import { Decider, DomainCommand, DomainEvent, NotFound } from '@deals/kernel';
import { naturalId } from '../natural-id';

export type SubscriptionStatus = 'active' | 'inactive';

export interface SubscriptionTerms {
  subscriptionId: string;
  partnerId: string;
  userId: string;
  regionId: string;
  regionName: string;
  /** Five digits, leading zeros kept. */
  zip: string;
  confirmed: boolean;
  source: string | null;
}

export type SubscriptionStarted = DomainEvent<'SubscriptionStarted', SubscriptionTerms & { createdAt: string }>;
export type SubscriptionStatusChanged = DomainEvent<
  'SubscriptionStatusChanged',
  { subscriptionId: string; status: SubscriptionStatus; at: string }
>;
export type SubscriptionEvent = SubscriptionStarted | SubscriptionStatusChanged;

/** POST /users/:user_id/subscriptions: starts it, or reactivates it if it was inactive. */
export type Subscribe = DomainCommand<'Subscribe', SubscriptionTerms>;
/** PUT /subscriptions/:id; `userId`: an access token's user, who may change only its own. */
export type SetSubscriptionStatus = DomainCommand<
  'SetSubscriptionStatus',
  { subscriptionId: string; partnerId: string; userId?: string; status: SubscriptionStatus }
>;
export type SubscriptionCommand = Subscribe | SetSubscriptionStatus;

/** One subscription per (partner, user, region). */
export const subscriptionId = (partnerId: string, userId: string, regionId: string) =>
  naturalId('subscription', partnerId, userId, regionId);
export const subscriptionStream = (id: string) => `subscription-${id}`;

export interface Subscription {
  started: boolean;
  partnerId: string | null;
  userId: string | null;
  status: SubscriptionStatus;
}

export const subscriptionDecider: Decider<Subscription, SubscriptionCommand, SubscriptionEvent> = {
  initialState: () => ({ started: false, partnerId: null, userId: null, status: 'active' }),
  decide(command, subscription, now) {
    const at = now.toISOString();
    if (command.type === 'Subscribe') {
      if (!subscription.started) return [{ type: 'SubscriptionStarted', data: { ...command.data, createdAt: at } }];
      return subscription.status === 'inactive'
        ? [{ type: 'SubscriptionStatusChanged', data: { subscriptionId: command.data.subscriptionId, status: 'active', at } }]
        : [];
    }
    const { subscriptionId, partnerId, userId, status } = command.data;
    if (!subscription.started || subscription.partnerId !== partnerId || (userId !== undefined && subscription.userId !== userId))
      throw new NotFound('subscription not found');
    return subscription.status === status ? [] : [{ type: 'SubscriptionStatusChanged', data: { subscriptionId, status, at } }];
  },
  evolve(subscription, event) {
    if (event.type === 'SubscriptionStarted')
      return { started: true, partnerId: event.data.partnerId, userId: event.data.userId, status: 'active' };
    return { ...subscription, status: event.data.status };
  },
};
