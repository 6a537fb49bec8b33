/** Engagement: card links, saved deals, subscriptions. */
export { EngagementHttpModule, EngagementModule } from './engagement.module';

export { CardLinkAudit } from './audit/card-link-audit';
export { CardLinkSettings } from './commands/card-link-settings';
export { EngagementQueries } from './queries/engagement.queries';
export { KeyedUnsubscribeLinks, UnsubscribeLinks } from './http/unsubscribe-links';
export type { SubscriptionView } from './projections/subscriptions/subscriptions.projection';
export type { CardLinkAuditEntry } from './audit/card-link-audit';
export { SAVED_DEALS } from './projections/saved-deals/saved-deals.projection';
export { SUBSCRIPTIONS } from './projections/subscriptions/subscriptions.projection';
export { CARD_LINK_DETAILS } from './projections/card-link-details/card-link-details.projection';

export { engagementProjections } from './projections';
/** A card link and a subscription in their API shapes (the partner event feed renders them too). */
export { toCardLink } from './http/card-links.answers';
export { toSubscription } from './http/engagement.answers';
export { cardLinkStream } from './domain/card-link/card-link.events';
/** The calls a bulk job's saved-deal and subscription items stand for. */
export { SaveDeal } from './commands/saved-deal.commands';
export { SubscribeUser } from './commands/subscription.commands';
export { saveDealBody, subscribeBody } from './http/engagement.request';
