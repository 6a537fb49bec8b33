import { Decider, DomainCommand, DomainEvent, ignoredEvent, NotFound, unknownCommand } from '@deals/kernel';
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

/** A subscription's stream: none yet, or a partner's user's subscription, active or inactive. */
export type Subscription = { status: 'none' } | { status: SubscriptionStatus; partnerId: string; userId: string };

export const subscriptionDecider: Decider<Subscription, SubscriptionCommand, SubscriptionEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, subscription, now) {
    const at = now.toISOString();
    switch (command.type) {
      case 'Subscribe':
        if (subscription.status === 'none') return [{ type: 'SubscriptionStarted', data: { ...command.data, createdAt: at } }];
        return subscription.status === 'inactive'
          ? [{ type: 'SubscriptionStatusChanged', data: { subscriptionId: command.data.subscriptionId, status: 'active', at } }]
          : [];
      case 'SetSubscriptionStatus': {
        const { subscriptionId, partnerId, userId, status } = command.data;
        if (
          subscription.status === 'none' ||
          subscription.partnerId !== partnerId ||
          (userId !== undefined && subscription.userId !== userId)
        )
          throw new NotFound('subscription not found');
        return subscription.status === status ? [] : [{ type: 'SubscriptionStatusChanged', data: { subscriptionId, status, at } }];
      }
      default:
        return unknownCommand(command);
    }
  },
  evolve(subscription, event) {
    switch (event.type) {
      case 'SubscriptionStarted':
        return { status: 'active', partnerId: event.data.partnerId, userId: event.data.userId };
      case 'SubscriptionStatusChanged':
        // A change follows the start (one before it is none the decider wrote, and is ignored).
        return subscription.status === 'none' ? subscription : { ...subscription, status: event.data.status };
      default:
        return ignoredEvent(event, subscription);
    }
  },
};
