import type { ViewDocument } from '@deals/kernel';
import type { FeedEventType, FeedResourceType } from '../../domain/feed-event';
import type { AttemptRecord } from '../../domain/webhook-delivery/webhook-delivery.events';

/** What the feed knows of one resource: its view as of the last event applied, and its feed events so far. */
export interface FeedResource extends ViewDocument {
  kind: 'resource';
  resourceType: FeedResourceType;
  state: ViewDocument | null;
  /** How many feed events this resource has made. */
  sequence: number;
  made: string[];
  /** A purchase's coupons as they stand, by id, each with its own feed events so far. */
  coupons?: Record<string, { state: ViewDocument; sequence: number; made: string[] }>;
}

/** Who listens to a partner's events. */
export interface FeedListeners extends ViewDocument {
  kind: 'listeners';
  partnerId: string;
  endpoints: Array<{ id: string; types: string[]; enabled: boolean }>;
}

/** "What happened to a partner's resources, in log order?" One partner-facing event. */
export interface FeedEvent extends ViewDocument {
  kind: 'event';
  partnerId: string;
  type: FeedEventType;
  resourceType: FeedResourceType;
  resourceId: string;
  /** 1 for a resource's first feed event, then 2, ... */
  sequence: number;
  /** When the log event happened (ISO 8601). */
  createdAt: string;
  /** The feed's order: the log position, then the event's place among those of one log event. */
  order: string;
  /** The resource's view as of this event (a purchase with its coupons), rendered in its API shape when read. */
  snapshot: { state: ViewDocument; coupons?: ViewDocument[] };
  /** What the event adds to the resource (a card-link redemption's amounts). */
  details?: Record<string, unknown>;
}

/** "Where does the delivery of event E to endpoint W stand?" */
export interface WebhookDelivery extends ViewDocument {
  kind: 'delivery';
  partnerId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  order: string;
  createdAt: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: AttemptRecord[];
  /** When the next attempt is due; null once it succeeded or failed for good. */
  nextAttemptAt: string | null;
}

export type FeedDocument = FeedResource | FeedListeners | FeedEvent | WebhookDelivery;
