import { accountOf, BatchDocuments, RecordedEvent, ViewDocument } from '@deals/kernel';
import type { FeedEventType, FeedResourceType } from '../../domain/feed-event';
import { deliveryId, feedEventId, feedOrder } from '../../domain/feed-ids';
import type { WebhookDeliveryAttempted } from '../../domain/webhook-delivery/webhook-delivery.events';
import type { WebhookEndpointEvent } from '../../domain/webhook-endpoint/webhook-endpoint.events';
import { detailsOf } from './feed-details';
import type { FeedDocument, FeedEvent, FeedListeners, FeedResource, WebhookDelivery } from './feed-documents';
import { couponSource, FEED_SOURCES, FeedSource, purchaseSource } from './feed-sources';

const resourceKey = (type: FeedResourceType, id: string) => `resource:${type}:${id}`;
const listenersKey = (partnerId: string) => `listeners:${partnerId}`;

/** The endpoint events that change who listens to a partner's events. */
export const ENDPOINT_EVENTS = [
  'WebhookEndpointCreated',
  'WebhookEndpointUpdated',
  'WebhookEndpointDeleted',
  'WebhookEndpointDisabled',
  'WebhookRedeliveryRequested',
];

/** Each feed source's resource a log event touches, with the source's `extra` reading of that event if it has one. */
function sourcesTouched(event: RecordedEvent): Array<{ source: FeedSource; id: string; extra: boolean }> {
  const touched: Array<{ source: FeedSource; id: string; extra: boolean }> = [];
  for (const source of FEED_SOURCES) {
    const extra = source.extra?.[event.type];
    if (!extra && !source.projection.handles.includes(event.type)) continue;
    for (const id of extra ? extra(event) : source.projection.documentIds(event)) touched.push({ source, id, extra: !!extra });
  }
  return touched;
}

/** The record of the purchase a coupon's event belongs to. */
const couponPurchaseKey = (event: RecordedEvent) =>
  resourceKey('purchase', purchaseOfCoupon((event.data as { couponId: string }).couponId));

/** The resource records a log event of a resource touches: its coupon's purchase, and each feed source's resource. */
function resourceKeysOf(event: RecordedEvent): string[] {
  if (ENDPOINT_EVENTS.includes(event.type) || event.type === 'WebhookDeliveryAttempted') return [];
  const keys = COUPON_EVENTS.has(event.type) ? [couponPurchaseKey(event)] : [];
  for (const { source, id } of sourcesTouched(event)) keys.push(resourceKey(source.resource, id));
  return keys;
}

/** One batch of the feed: the documents it read and changed, and the events it makes. */
export class FeedBatch {
  private readonly docs = new Map<string, FeedDocument | null>();
  private readonly changed = new Set<string>();
  /** How many feed events each log event of the batch made so far. */
  private readonly madeAt = new Map<string, number>();
  /** Feed events made by the event being applied, with its id, to deliver once it is applied. */
  private pendingDeliveries: Array<[FeedEvent, string]> = [];

  constructor(private readonly stored: BatchDocuments<FeedDocument>) {}

  async apply(events: readonly RecordedEvent[]): Promise<FeedDocument[]> {
    // The resources the batch's events touch, read in one go rather than one read an event.
    await this.load([...new Set(events.flatMap(resourceKeysOf))]);
    for (const event of events) {
      if (ENDPOINT_EVENTS.includes(event.type)) await this.endpointEvent(event);
      else if (event.type === 'WebhookDeliveryAttempted') await this.attempt(event);
      else {
        await this.resourceEvent(event);
        for (const [feedEvent, causeId] of this.pendingDeliveries) await this.deliver(feedEvent, causeId);
        this.pendingDeliveries = [];
      }
    }
    return [...this.changed].map((id) => this.docs.get(id)!);
  }

  private async load<T extends FeedDocument>(ids: readonly string[]): Promise<Array<T | null>> {
    const missing = ids.filter((id) => !this.docs.has(id));
    if (missing.length) {
      const found = await this.stored.get(missing);
      for (const id of missing) this.docs.set(id, found.get(id) ?? null);
    }
    return ids.map((id) => this.docs.get(id) as T | null);
  }

  private put(doc: FeedDocument): void {
    this.docs.set(doc._id, doc);
    this.changed.add(doc._id);
  }

  private async resourceEvent(event: RecordedEvent): Promise<void> {
    // Each resource applies a log event once: decided when first touched by it.
    const fresh = new Set<string>();
    const touch = async (key: string): Promise<FeedResource | null | undefined> => {
      const [doc] = await this.load<FeedResource>([key]);
      if (!fresh.has(key)) {
        if (doc && doc._pos >= event.position) return undefined;
        fresh.add(key);
      }
      return doc;
    };
    // A coupon's events first: the purchase's record of its coupons is then current when the purchase decides.
    if (COUPON_EVENTS.has(event.type)) await this.couponEvent(event, touch);
    for (const { source, id, extra } of sourcesTouched(event)) {
      const key = resourceKey(source.resource, id);
      const doc = await touch(key);
      if (doc === undefined) continue;
      const before = doc?.state ?? null;
      const evolved = extra ? before : source.projection.evolve(before, event, id);
      if (!evolved) continue;
      const stamp = stamped(evolved, id, event.position);
      const after = source.kept?.(stamp) ?? stamp;
      const types = source.emits({ event, before, after, made: new Set(doc?.made ?? []) });
      // An event that leaves the view alone (a hold released) is kept only when it made feed events.
      if (extra && types.length === 0) continue;
      const resource: FeedResource = { ...(doc ?? newResource(key, source.resource)), _pos: event.position, state: after };
      this.put(this.emit(source, event, resource, types));
    }
  }

  /**
   * A coupon's event, kept in its purchase's record (a coupon is not a record of its own: one
   * document a purchase, however many coupons it has, is one write less for each): the coupon's
   * own feed events, and `purchase.refunded` when a coupon of a completed purchase is cancelled.
   */
  private async couponEvent(event: RecordedEvent, touch: (key: string) => Promise<FeedResource | null | undefined>): Promise<void> {
    const couponId = (event.data as { couponId: string }).couponId;
    const key = couponPurchaseKey(event);
    const doc = await touch(key);
    if (doc === undefined) return;
    const purchase = doc ?? newResource(key, 'purchase');
    const held = purchase.coupons?.[couponId];
    const before = held?.state ?? null;
    const evolved = event.type === 'CouponExpired' ? before : couponSource.projection.evolve(before, event, couponId);
    if (!evolved) return;
    const after = stamped(evolved, couponId, event.position);
    let types = couponSource.emits({ event, before, after, made: new Set(held?.made ?? []) });
    // Expiries recorded long after the fact (the first sweep of an installation that had none) are no news.
    if (
      event.type === 'CouponExpired' &&
      Date.parse(event.metadata.occurredAt) - Date.parse(String((event.data as { expiredAt: string }).expiredAt)) > STALE_EXPIRY_MS
    )
      types = [];
    const coupon = this.emit(couponSource, event, { ...newResource(couponId, 'coupon'), ...held, state: after }, types);
    let resource: FeedResource = {
      ...purchase,
      _pos: event.position,
      coupons: { ...purchase.coupons, [couponId]: { state: after, sequence: coupon.sequence, made: coupon.made } },
    };
    if (event.type === 'CouponCancelled' && resource.made.includes('purchase.completed'))
      resource = this.emit(purchaseSource, event, resource, ['purchase.refunded'], { coupon_id: couponId });
    this.put(resource);
  }

  /** The feed events `types` of the resource, each with its sequence: the resource after them. */
  private emit<R extends { state: ViewDocument | null; sequence: number; made: string[] }>(
    source: FeedSource,
    event: RecordedEvent,
    resource: R,
    types: FeedEventType[],
    details?: Record<string, unknown>,
  ): R {
    const state = resource.state;
    const partnerId = (state as unknown as { partnerId?: string } | null)?.partnerId;
    if (!state || !partnerId || types.length === 0) return resource;
    let { sequence } = resource;
    const made = new Set(resource.made);
    for (const type of types) {
      sequence += 1;
      made.add(type);
      const index = this.madeAt.get(event.position) ?? 0;
      this.madeAt.set(event.position, index + 1);
      const coupons = (resource as unknown as FeedResource).coupons;
      const extra = details ?? detailsOf(event);
      const feedEvent: FeedEvent = {
        _id: feedEventId(event.id, type),
        _pos: event.position,
        kind: 'event',
        partnerId,
        type,
        resourceType: source.resource,
        resourceId: state._id,
        sequence,
        createdAt: event.metadata.occurredAt,
        order: feedOrder(event.position, index),
        snapshot:
          source === purchaseSource
            ? {
                state,
                coupons: Object.values(coupons ?? {})
                  .map((c) => c.state)
                  .sort((a, b) => number(a) - number(b)),
              }
            : { state },
        ...(extra ? { details: extra } : {}),
      };
      this.put(feedEvent);
      this.pendingDeliveries.push([feedEvent, event.id]);
    }
    return { ...resource, sequence, made: [...made] };
  }

  /** A delivery of the event to each endpoint of its partner (a test clock's world: its sandbox) listening for its type. */
  private async deliver(feedEvent: FeedEvent, causeId: string, only?: string): Promise<void> {
    const [listeners] = await this.load<FeedListeners>([listenersKey(accountOf(feedEvent.partnerId))]);
    for (const endpoint of listeners?.endpoints ?? []) {
      if (only !== undefined ? endpoint.id !== only : !endpoint.enabled || !listensTo(endpoint.types, feedEvent.type)) continue;
      const id = deliveryId(feedEvent._id, endpoint.id, causeId);
      const [known] = await this.load<WebhookDelivery>([id]);
      if (known) continue;
      this.put({
        _id: id,
        _pos: feedEvent._pos,
        kind: 'delivery',
        partnerId: feedEvent.partnerId,
        endpointId: endpoint.id,
        eventId: feedEvent._id,
        eventType: feedEvent.type,
        order: feedEvent.order,
        createdAt: feedEvent.createdAt,
        status: 'pending',
        attempts: [],
        nextAttemptAt: feedEvent.createdAt,
      });
    }
  }

  private async endpointEvent(recorded: RecordedEvent): Promise<void> {
    const event = recorded as unknown as WebhookEndpointEvent;
    const key = listenersKey(event.data.partnerId);
    const [doc] = await this.load<FeedListeners>([key]);
    if (doc && doc._pos >= recorded.position) return;
    const listeners: FeedListeners = doc
      ? { ...doc, _pos: recorded.position }
      : { _id: key, _pos: recorded.position, kind: 'listeners', partnerId: event.data.partnerId, endpoints: [] };
    const others = listeners.endpoints.filter((e) => e.id !== event.data.endpointId);
    const current = listeners.endpoints.find((e) => e.id === event.data.endpointId);
    switch (event.type) {
      case 'WebhookEndpointCreated':
        listeners.endpoints = [...others, { id: event.data.endpointId, types: event.data.types, enabled: event.data.enabled }];
        break;
      case 'WebhookEndpointUpdated':
        if (current)
          listeners.endpoints = [
            ...others,
            { id: current.id, types: event.data.types ?? current.types, enabled: event.data.enabled ?? current.enabled },
          ];
        break;
      case 'WebhookEndpointDisabled':
        if (current) listeners.endpoints = [...others, { ...current, enabled: false }];
        break;
      case 'WebhookEndpointDeleted':
        listeners.endpoints = others;
        break;
      case 'WebhookRedeliveryRequested': {
        if (!current) return;
        const found = await this.load<FeedEvent>(event.data.eventIds);
        for (const feedEvent of found) if (feedEvent?.kind === 'event') await this.deliver({ ...feedEvent }, recorded.id, current.id);
        return;
      }
    }
    this.put(listeners);
  }

  private async attempt(recorded: RecordedEvent): Promise<void> {
    const { data } = recorded as unknown as WebhookDeliveryAttempted;
    const [doc] = await this.load<WebhookDelivery>([data.deliveryId]);
    if (!doc || doc._pos >= recorded.position) return;
    const { attempt, at, status, latencyMs, responseExcerpt, error } = data;
    this.put({
      ...doc,
      _pos: recorded.position,
      status: data.outcome === 'retrying' ? 'pending' : data.outcome,
      attempts: [...doc.attempts, { attempt, at, status, latencyMs, responseExcerpt, error }],
      nextAttemptAt: data.nextAttemptAt,
    });
  }
}

/** An expiry recorded later than this after the coupon expired makes no `coupon.expired`. */
const STALE_EXPIRY_MS = 24 * 3_600_000;

export const COUPON_EVENTS = new Set([...couponSource.projection.handles, 'CouponExpired']);

const newResource = (key: string, resourceType: FeedResourceType): FeedResource => ({
  _id: key,
  _pos: '',
  kind: 'resource',
  resourceType,
  state: null,
  sequence: 0,
  made: [],
});

/** `doc` with its id and position (itself when it has them). */
const stamped = (doc: ViewDocument, id: string, position: string): ViewDocument =>
  doc._id === id && doc._pos === position ? doc : { ...doc, _id: id, _pos: position };

/** A coupon's purchase: its id is the purchase's and its number (`couponIdsFor`). */
const purchaseOfCoupon = (couponId: string) => couponId.replace(/-\d+$/, '');

const listensTo = (types: readonly string[], type: string) => types.includes('*') || types.includes(type);

const number = (coupon: ViewDocument) => (coupon as unknown as { number?: number }).number ?? 0;
