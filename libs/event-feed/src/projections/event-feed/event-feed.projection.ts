import { BatchDocuments, defineProjection } from '@deals/kernel';
import { ENDPOINT_EVENTS, FeedBatch } from './feed-batch';
import type { FeedDocument } from './feed-documents';
import { couponSource, FEED_SOURCES } from './feed-sources';

export const EVENT_FEED = 'event_feed';

/**
 * The partner event feed (issue 37): every feed event a partner's resources made, in log order,
 * with the resource as it was then, and the deliveries each made to the partner's webhook
 * endpoints listening at the time. Derived from the log alone: a rebuild makes the same events
 * with the same ids, and the same deliveries with the attempts recorded for them.
 */
export const eventFeedProjection = defineProjection<FeedDocument>({
  name: EVENT_FEED,
  handles: [
    ...new Set([
      ...[couponSource, ...FEED_SOURCES].flatMap((source) => [...source.projection.handles, ...Object.keys(source.extra ?? {})]),
      'CouponExpired',
      ...ENDPOINT_EVENTS,
      'WebhookDeliveryAttempted',
    ]),
  ],
  indexes: [
    { keys: { kind: 1, partnerId: 1 } },
    { keys: { order: 1 } },
    { keys: { resourceId: 1 } },
    { keys: { eventId: 1 } },
    { keys: { endpointId: 1 } },
    { keys: { status: 1 } },
  ],
  // A feed read by cursor: answers do not wait for it (a partner's next poll sees the event).
  answersWait: false,
  documentIds: () => [],
  evolve: () => null,
  applyBatch: (events, documents) => new FeedBatch(documents as BatchDocuments<FeedDocument>).apply(events),
});
