import { findOfPartner, ViewFilter, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { EVENT_FEED } from '../projections/event-feed/event-feed.projection';
import type { FeedEvent, WebhookDelivery } from '../projections/event-feed/feed-documents';

export interface FeedPageQuery {
  /** The order of the event to start after; null from the partner's first. */
  afterOrder: string | null;
  types: readonly string[];
  resourceId: string | null;
  limit: number;
}

/** The questions asked of the event feed. */
@Injectable()
export class EventFeedQueries {
  constructor(private readonly views: ViewStore) {}

  /** Read by id, then checked: a look-up by id is served from what the view holds, pending writes too. */
  async event(partnerId: string, eventId: string): Promise<FeedEvent | null> {
    return findOfPartner<FeedEvent>(this.views, EVENT_FEED, eventId, partnerId, (doc) => doc.kind === 'event');
  }

  /** A partner's events in log order after a point, of some types, of one resource: up to `limit`. */
  page(partnerId: string, { afterOrder, types, resourceId, limit }: FeedPageQuery): Promise<FeedEvent[]> {
    const filter: ViewFilter = { kind: 'event', partnerId };
    if (afterOrder !== null) filter.order = { $gt: afterOrder };
    if (types.length) filter.type = { $in: [...types] };
    if (resourceId !== null) filter.resourceId = resourceId;
    return this.views.find<FeedEvent>(EVENT_FEED, filter, { sort: { order: 1 }, limit });
  }

  /** A partner's latest events, newest first: up to `limit` before the event of order `beforeOrder` (null: the newest). */
  latest(partnerId: string, beforeOrder: string | null, limit: number): Promise<FeedEvent[]> {
    const filter: ViewFilter = { kind: 'event', partnerId };
    if (beforeOrder !== null) filter.order = { $lt: beforeOrder };
    return this.views.find<FeedEvent>(EVENT_FEED, filter, { sort: { order: -1 }, limit });
  }

  /** Events of the partner in an order range (a replay): `from` excluded, `to` included. */
  range(
    partnerId: string,
    fromOrder: string | null,
    toOrder: string | null,
    types: readonly string[] | null,
    limit: number,
  ): Promise<FeedEvent[]> {
    const order: Record<string, string> = {};
    if (fromOrder !== null) order.$gt = fromOrder;
    if (toOrder !== null) order.$lte = toOrder;
    const filter: ViewFilter = { kind: 'event', partnerId };
    if (Object.keys(order).length) filter.order = order;
    if (types !== null && !types.includes('*')) filter.type = { $in: [...types] };
    return this.views.find<FeedEvent>(EVENT_FEED, filter, { sort: { order: 1 }, limit });
  }

  async delivery(deliveryId: string): Promise<WebhookDelivery | null> {
    const doc = await this.views.findById<WebhookDelivery>(EVENT_FEED, deliveryId);
    return doc?.kind === 'delivery' ? doc : null;
  }

  deliveriesOfEvent(partnerId: string, eventId: string): Promise<WebhookDelivery[]> {
    return this.views.find<WebhookDelivery>(EVENT_FEED, { kind: 'delivery', partnerId, eventId }, { sort: { order: 1 } });
  }

  /**
   * An endpoint's deliveries, latest first: its owner's events and those of the owner's test clocks
   * (whose worlds have partner ids of their own). The caller has checked the endpoint is theirs.
   */
  deliveriesOfEndpoint(endpointId: string, skip: number, limit: number): Promise<WebhookDelivery[]> {
    return this.views.find<WebhookDelivery>(EVENT_FEED, { kind: 'delivery', endpointId }, { sort: { order: -1 }, skip, limit });
  }

  /** Deliveries not finished, soonest first (re-armed when a job-running process starts). */
  pendingDeliveries(limit: number, afterOrder: string | null): Promise<WebhookDelivery[]> {
    const filter: ViewFilter = { kind: 'delivery', status: 'pending' };
    if (afterOrder !== null) filter.order = { $gt: afterOrder };
    return this.views.find<WebhookDelivery>(EVENT_FEED, filter, { sort: { order: 1 }, limit });
  }
}
