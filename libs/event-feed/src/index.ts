export { FEED_EVENT_TYPES, isFeedEventType } from './domain/feed-event';
export type { FeedEventType, FeedResourceType } from './domain/feed-event';
