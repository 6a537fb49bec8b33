import type { Projection } from '@deals/kernel';
import { cardLinkDetailsProjection } from './card-link-details/card-link-details.projection';
import { cardTransactionsProjection } from './card-transactions/card-transactions.projection';
import { savedDealsProjection } from './saved-deals/saved-deals.projection';
import { subscriptionsProjection } from './subscriptions/subscriptions.projection';

/** Every projection engagement owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const engagementProjections = [
  cardLinkDetailsProjection,
  cardTransactionsProjection,
  savedDealsProjection,
  subscriptionsProjection,
] as Projection[];
export { cardLinkDetailsProjection, subscriptionsProjection };
export type { CardLinkDetails } from './card-link-details/card-link-details.projection';
export type { SubscriptionView } from './subscriptions/subscriptions.projection';
