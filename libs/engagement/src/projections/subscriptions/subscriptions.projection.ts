import { defineProjection, ViewDocument } from '@deals/kernel';
import type { SubscriptionEvent, SubscriptionStatus } from '../../domain/subscription/subscription.decider';

/** "What is subscription X, and which regions is user Y subscribed to?" */
export interface SubscriptionView extends ViewDocument {
  partnerId: string;
  userId: string;
  regionId: string;
  regionName: string;
  zip: string;
  status: SubscriptionStatus;
  confirmed: boolean;
  source: string | null;
  createdAt: string;
}

export const SUBSCRIPTIONS = 'subscriptions';

export const subscriptionsProjection = defineProjection<SubscriptionView>({
  name: SUBSCRIPTIONS,
  handles: ['SubscriptionStarted', 'SubscriptionStatusChanged'],
  indexes: [{ keys: { userId: 1 } }, { keys: { partnerId: 1 } }, { keys: { regionId: 1 } }],
  documentIds: (event) => [(event.data as { subscriptionId: string }).subscriptionId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as SubscriptionEvent;
    if (event.type === 'SubscriptionStatusChanged') return view && { ...view, status: event.data.status };
    const { partnerId, userId, regionId, regionName, zip, confirmed, source, createdAt } = event.data;
    return {
      _id: id,
      _pos: recorded.position,
      partnerId,
      userId,
      regionId,
      regionName,
      zip,
      status: 'active',
      confirmed,
      source,
      createdAt,
    };
  },
});
