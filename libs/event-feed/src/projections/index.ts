import { eventFeedProjection } from './event-feed/event-feed.projection';

/** Every projection the event feed owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const eventFeedProjections = [eventFeedProjection];
export { EVENT_FEED, eventFeedProjection } from './event-feed/event-feed.projection';
export type { FeedEvent, FeedListeners, FeedResource, WebhookDelivery } from './event-feed/event-feed.projection';
