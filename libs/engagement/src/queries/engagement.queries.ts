import { findOfPartner, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { SAVED_DEALS, SavedDealView } from '../projections/saved-deals/saved-deals.projection';
import { SUBSCRIPTIONS, SubscriptionView } from '../projections/subscriptions/subscriptions.projection';

/** Reads of saved deals and subscriptions, always within one partner. */
@Injectable()
export class EngagementQueries {
  constructor(private readonly views: ViewStore) {}

  async savedDeal(partnerId: string, savedDealId: string): Promise<SavedDealView | null> {
    return findOfPartner<SavedDealView>(this.views, SAVED_DEALS, savedDealId, partnerId, (view) => !view.removed);
  }

  savedDeals(partnerId: string, userId: string, skip: number, limit: number): Promise<SavedDealView[]> {
    return this.views.find<SavedDealView>(
      SAVED_DEALS,
      { userId, partnerId, removed: false },
      { sort: { savedAt: -1, _id: 1 }, skip, limit },
    );
  }

  /** The deals a user has saved (and not removed). */
  async savedDealIds(partnerId: string, userId: string): Promise<string[]> {
    return (await this.views.find<SavedDealView>(SAVED_DEALS, { userId, partnerId, removed: false })).map((s) => s.dealId);
  }

  countSavedDeals(partnerId: string, userId: string): Promise<number> {
    return this.views.count(SAVED_DEALS, { userId, partnerId, removed: false });
  }

  async subscription(partnerId: string, subscriptionId: string): Promise<SubscriptionView | null> {
    return findOfPartner<SubscriptionView>(this.views, SUBSCRIPTIONS, subscriptionId, partnerId);
  }

  /** A subscription whoever's it is (the unsubscribe link's key stands for its owner). */
  anySubscription(subscriptionId: string): Promise<SubscriptionView | null> {
    return this.views.findById<SubscriptionView>(SUBSCRIPTIONS, subscriptionId);
  }

  /** The active subscriptions of a region, every partner's: the readers of its daily email. */
  activeInRegion(regionId: string): Promise<SubscriptionView[]> {
    return this.views.find<SubscriptionView>(SUBSCRIPTIONS, { regionId, status: 'active' }, { sort: { createdAt: 1, _id: 1 } });
  }

  subscriptions(partnerId: string, userId: string, skip: number, limit: number): Promise<SubscriptionView[]> {
    return this.views.find<SubscriptionView>(SUBSCRIPTIONS, { userId, partnerId }, { sort: { createdAt: -1, _id: 1 }, skip, limit });
  }

  countSubscriptions(partnerId: string, userId: string): Promise<number> {
    return this.views.count(SUBSCRIPTIONS, { userId, partnerId });
  }
}
