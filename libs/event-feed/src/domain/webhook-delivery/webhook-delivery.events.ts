import type { DomainEvent } from '@deals/kernel';

/** One attempt to deliver an event to an endpoint, and what came of it. */
export interface AttemptRecord {
  attempt: number;
  at: string;
  /** The receiver's HTTP status; null when none came (timeout, connection, TLS, address refused). */
  status: number | null;
  latencyMs: number;
  /** The first bytes of the answer (at most 1,024). */
  responseExcerpt: string;
  error: string | null;
}

export type WebhookDeliveryAttempted = DomainEvent<
  'WebhookDeliveryAttempted',
  AttemptRecord & {
    deliveryId: string;
    endpointId: string;
    eventId: string;
    partnerId: string;
    /** `retrying` until the schedule runs out, then `failed`. */
    outcome: 'succeeded' | 'retrying' | 'failed';
    nextAttemptAt: string | null;
  }
>;

export type WebhookDeliveryEvent = WebhookDeliveryAttempted;

export const webhookDeliveryStream = (deliveryId: string) => `webhookdelivery-${deliveryId}`;
