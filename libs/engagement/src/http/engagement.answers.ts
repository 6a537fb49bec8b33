import { humanUtc } from '@deals/wire';
import { z } from 'zod';
import type { SavedDealView } from '../projections/saved-deals/saved-deals.projection';
import type { SubscriptionView } from '../projections/subscriptions/subscriptions.projection';

const countAnswer = z.object({ status: z.literal('success'), count: z.number().int() });

/** A saved deal as the API answers it. */
export const savedDealSchema = z.object({ id: z.string(), deal_id: z.string(), user_id: z.string() }).meta({
  id: 'SavedDeal',
  description: 'a deal a user saved',
  example: { id: '3f9a0c1d2b7e4a5c6d8e', deal_id: 'chicago-spa-day', user_id: 'u4Kd8' },
});
const exampleSaved = (savedDealSchema.meta() as { example: Record<string, unknown> }).example;

export const toSavedDeal = (view: SavedDealView) => ({ id: view._id, deal_id: view.dealId, user_id: view.userId });

export const SavedDealAnswer = z
  .object({ status: z.literal('success'), saved_deal: savedDealSchema })
  .meta({ example: { status: 'success', saved_deal: exampleSaved } });
export const SavedDealListAnswer = z
  .union([z.object({ status: z.literal('success'), saved_deals: z.array(savedDealSchema) }), countAnswer])
  .meta({ example: { status: 'success', saved_deals: [exampleSaved] } });
export const StatusOnlyAnswer = z.object({ status: z.literal('success') }).meta({ example: { status: 'success' } });

/** A subscription as the API answers it. */
export const subscriptionSchema = z
  .object({
    id: z.string(),
    user_id: z.string(),
    status: z.enum(['active', 'inactive']),
    confirmed: z.boolean(),
    region_id: z.string(),
    region_name: z.string(),
    zip: z.string().meta({ description: 'five digits' }),
    created_at: z.string().meta({ description: 'human-readable UTC text' }),
    source: z.string().nullable(),
  })
  .meta({
    id: 'Subscription',
    description: "a user's regional email subscription",
    example: {
      id: '7c2e9b0a4d1f3e5a6b8c',
      user_id: 'u4Kd8',
      status: 'active',
      confirmed: true,
      region_id: 'boston',
      region_name: 'Boston',
      zip: '02134',
      created_at: 'Mon Jun 15 12:00:00 UTC 2026',
      source: 'footer-form',
    },
  });
const exampleSubscription = (subscriptionSchema.meta() as { example: Record<string, unknown> }).example;

export const toSubscription = (view: SubscriptionView) => ({
  id: view._id,
  user_id: view.userId,
  status: view.status,
  confirmed: view.confirmed,
  region_id: view.regionId,
  region_name: view.regionName,
  zip: view.zip,
  created_at: humanUtc(view.createdAt),
  source: view.source,
});

export const SubscriptionAnswer = z
  .object({ status: z.literal('success'), subscription: subscriptionSchema })
  .meta({ example: { status: 'success', subscription: exampleSubscription } });
export const SubscriptionListAnswer = z
  .union([z.object({ status: z.literal('success'), subscriptions: z.array(subscriptionSchema) }), countAnswer])
  .meta({ example: { status: 'success', subscriptions: [exampleSubscription] } });
