import type { DomainEvent } from '@deals/kernel';

/**
 * An endpoint's signing secret is never recorded: only a random salt, from which the secret is
 * derived under an installation secret (`WebhookSecrets`). The log alone cannot sign.
 */
export interface EndpointTerms {
  url: string;
  description: string;
  /** The event types it wants; `*` for every type. */
  types: string[];
}

export type WebhookEndpointCreated = DomainEvent<
  'WebhookEndpointCreated',
  EndpointTerms & { endpointId: string; partnerId: string; enabled: boolean; secretSalt: string; createdAt: string }
>;
export type WebhookEndpointUpdated = DomainEvent<
  'WebhookEndpointUpdated',
  Partial<EndpointTerms> & { endpointId: string; partnerId: string; enabled?: boolean }
>;
export type WebhookEndpointDeleted = DomainEvent<'WebhookEndpointDeleted', { endpointId: string; partnerId: string; deletedAt: string }>;
/** A new secret; the one before keeps signing beside it until `previousUntil`. */
export type WebhookSecretRotated = DomainEvent<
  'WebhookSecretRotated',
  { endpointId: string; partnerId: string; secretSalt: string; previousUntil: string }
>;
/** Disabled by the service: the receiver answered 410 Gone, or failed every delivery for five days. */
export type WebhookEndpointDisabled = DomainEvent<
  'WebhookEndpointDisabled',
  { endpointId: string; partnerId: string; reason: 'gone' | 'failing'; at: string }
>;
/** Its deliveries started failing at `since` (the first failure after a success). */
export type WebhookEndpointFailing = DomainEvent<'WebhookEndpointFailing', { endpointId: string; partnerId: string; since: string }>;
export type WebhookEndpointRecovered = DomainEvent<'WebhookEndpointRecovered', { endpointId: string; partnerId: string; at: string }>;
/** The partner asked for these events to be sent to the endpoint again. */
export type WebhookRedeliveryRequested = DomainEvent<
  'WebhookRedeliveryRequested',
  { endpointId: string; partnerId: string; eventIds: string[]; requestedAt: string }
>;

/**
 * The place its creation took was given up before the endpoint was made (that creation stopped
 * midway): it never will be, and its place is freed.
 */
export type WebhookEndpointAbandoned = DomainEvent<'WebhookEndpointAbandoned', { endpointId: string; partnerId: string; at: string }>;

export type WebhookEndpointEvent =
  | WebhookEndpointCreated
  | WebhookEndpointUpdated
  | WebhookEndpointDeleted
  | WebhookSecretRotated
  | WebhookEndpointDisabled
  | WebhookEndpointFailing
  | WebhookEndpointRecovered
  | WebhookRedeliveryRequested
  | WebhookEndpointAbandoned;

/**
 * On the partner's places stream: the endpoints it had before places were kept, each taking one
 * (the stream's first decision counts them).
 */
export type WebhookEndpointsCounted = DomainEvent<
  'WebhookEndpointsCounted',
  { partnerId: string; endpointIds: string[]; countedAt: string }
>;
/** On the partner's places stream: a place for a new endpoint, taken before the endpoint is made. */
export type WebhookEndpointPlaceTaken = DomainEvent<
  'WebhookEndpointPlaceTaken',
  { partnerId: string; endpointId: string; takenAt: string }
>;
/** On the partner's places stream: its endpoint was deleted, or abandoned before it was made. */
export type WebhookEndpointPlaceFreed = DomainEvent<
  'WebhookEndpointPlaceFreed',
  { partnerId: string; endpointId: string; freedAt: string }
>;
export type WebhookEndpointPlacesEvent = WebhookEndpointsCounted | WebhookEndpointPlaceTaken | WebhookEndpointPlaceFreed;

export const webhookEndpointStream = (endpointId: string) => `webhookendpoint-${endpointId}`;
/** A partner's webhook endpoint places: how many endpoints it has, decided. */
export const webhookEndpointPlacesStream = (partnerId: string) => `webhookendpointplaces-${partnerId}`;
