import { eventFeedProjection } from './event-feed/event-feed.projection';
import { webhookEndpointsProjection } from './webhook-endpoints/webhook-endpoints.projection';

/** Every projection the event feed owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const eventFeedProjections = [eventFeedProjection, webhookEndpointsProjection];
export { EVENT_FEED, eventFeedProjection } from './event-feed/event-feed.projection';
export type { FeedEvent, FeedListeners, FeedResource, WebhookDelivery } from './event-feed/feed-documents';
export { WEBHOOK_ENDPOINTS, webhookEndpointsProjection } from './webhook-endpoints/webhook-endpoints.projection';
export type { WebhookEndpointView } from './webhook-endpoints/webhook-endpoints.projection';
