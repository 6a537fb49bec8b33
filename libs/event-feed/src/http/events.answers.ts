import { z } from 'zod';
import { FEED_EVENT_TYPES } from '../domain/feed-event';
import type { WebhookDelivery } from '../projections/event-feed/feed-documents';

/** A partner-facing event, as GET /v1/events lists it and a webhook delivers it. */
export const feedEventSchema = z
  .object({
    id: z
      .string()
      .meta({ description: 'the event; derived from the log, the same after a rebuild', example: 'evt_9bQ1xV0cKp3sWm2LrT8aYd4e' }),
    type: z.enum(FEED_EVENT_TYPES),
    created_at: z.string().meta({ description: 'when it happened, ISO 8601 UTC', example: '2026-06-15T12:00:00.000Z' }),
    resource: z.enum(['purchase', 'coupon', 'refund', 'card_link', 'targeted_email_batch', 'subscription', 'user', 'bulk_job']),
    resource_id: z.string(),
    sequence: z.number().int().meta({ description: "the event's number among its resource's events, from 1: order them by it" }),
    livemode: z.boolean().meta({ description: "false: an event of the partner's sandbox (test credentials); true: a live one" }),
    data: z.record(z.string(), z.unknown()).meta({
      description:
        'the resource in its own API shape (Purchase with coupons, Coupon, Refund, CardLink, TargetedEmailBatch, Subscription, User, BulkJob) as it was then',
    }),
    redemption: z
      .object({
        transaction_reference: z.string(),
        transaction_amount: z.number().int().meta({ description: 'cents' }),
        transaction_date: z.string(),
        max_redemption: z.boolean(),
        qualifies: z.boolean(),
        incentive_amount: z.number().int().meta({ description: 'the incentive owed to the user, cents' }),
        fee_amount: z.number().int().meta({ description: "the partner's fee, cents" }),
      })
      .optional()
      .meta({ description: 'card_link.redeemed only: the transaction and what it earned' }),
    card_transaction: z
      .object({
        transaction_reference: z.string(),
        phase: z.enum(['authorised', 'cleared', 'refunded']),
        transaction_amount: z.number().int().meta({ description: 'the amount of that phase, cents' }),
        transaction_date: z.string(),
        incentive_amount: z.number().int().meta({ description: 'cleared: the incentive credited, cents' }),
        fee_amount: z.number().int().meta({ description: "cleared: the partner's fee, cents" }),
        incentive_reversed: z.number().int().meta({ description: 'refunded: the incentive reversed, cents' }),
        fee_reversed: z.number().int().meta({ description: 'refunded: the fee reversed, cents' }),
      })
      .optional()
      .meta({ description: 'card_link.transaction_* only: the phase reported and what it earned or gave back' }),
    rollback: z
      .object({
        redeemed_at: z.string().meta({ description: 'when the redemption undone was made, ISO 8601 UTC' }),
        reason: z.string(),
        note: z.string().nullable(),
      })
      .optional()
      .meta({ description: 'coupon.redemption_rolled_back only: the redemption undone and why' }),
    coupon_id: z
      .string()
      .optional()
      .meta({ description: "purchase.refunded after a reseller's cancel: the coupon cancelled and refunded" }),
    refund_id: z
      .string()
      .optional()
      .meta({ description: 'purchase.refunded after a refund of a card purchase: the refund that succeeded' }),
  })
  .meta({
    id: 'Event',
    description: 'A partner-facing event: what happened to one of its resources, with the resource as it was then',
    example: {
      id: 'evt_9bQ1xV0cKp3sWm2LrT8aYd4e',
      type: 'coupon.redeemed',
      created_at: '2026-06-15T12:00:00.000Z',
      resource: 'coupon',
      resource_id: 'p7Hc2-1',
      sequence: 1,
      livemode: true,
      data: { id: 'p7Hc2-1', state: 'redeemed', redeemed_at: 'Mon Jun 15 12:00:00 UTC 2026' },
    },
  });

const exampleEvent = (feedEventSchema.meta() as { example: Record<string, unknown> }).example;

export const EventListAnswer = z
  .object({
    status: z.literal('success'),
    events: z.array(feedEventSchema),
    has_more: z.boolean().meta({ description: 'whether more events follow this page now' }),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'give it as `after` for the next page (the last event listed; the `after` given when none was)' }),
  })
  .meta({ example: { status: 'success', events: [exampleEvent], has_more: false, next_cursor: exampleEvent.id } });
export const EventAnswer = z
  .object({ status: z.literal('success'), event: feedEventSchema })
  .meta({ example: { status: 'success', event: exampleEvent } });

export const attemptSchema = z
  .object({
    attempt: z.number().int(),
    at: z.string().meta({ description: 'ISO 8601 UTC' }),
    status: z.number().int().nullable().meta({ description: "the receiver's HTTP status; null when none came" }),
    latency_ms: z.number().int(),
    response: z.string().meta({ description: 'the first bytes of the answer (at most 1,024)' }),
    error: z.string().nullable(),
  })
  .meta({ id: 'WebhookAttempt', description: 'One attempt to deliver an event to an endpoint' });

export const deliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string(),
    event_type: z.enum(FEED_EVENT_TYPES),
    endpoint_id: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    next_attempt_at: z.string().nullable().meta({ description: 'ISO 8601 UTC; null once it succeeded or failed for good' }),
    attempts: z.array(attemptSchema),
  })
  .meta({ id: 'WebhookDelivery', description: "One event's delivery to one endpoint, with its attempts" });
export const DeliveryListAnswer = z.object({ status: z.literal('success'), deliveries: z.array(deliverySchema) }).meta({
  example: {
    status: 'success',
    deliveries: [
      {
        id: 'whd_3kQ9sLm2VbX0cPq7TzR1yWd5',
        event_id: exampleEvent.id,
        event_type: 'coupon.redeemed',
        endpoint_id: 'we_k7Qp2',
        status: 'succeeded',
        next_attempt_at: null,
        attempts: [
          { attempt: 1, at: '2026-06-15T12:00:00.120Z', status: 500, latency_ms: 84, response: 'try later', error: 'answered 500' },
          { attempt: 2, at: '2026-06-15T12:00:05.130Z', status: 200, latency_ms: 41, response: '', error: null },
        ],
      },
    ],
  },
});

export const toDelivery = (d: WebhookDelivery) => ({
  id: d._id,
  event_id: d.eventId,
  event_type: d.eventType,
  endpoint_id: d.endpointId,
  status: d.status,
  next_attempt_at: d.nextAttemptAt,
  attempts: d.attempts.map((a) => ({
    attempt: a.attempt,
    at: a.at,
    status: a.status,
    latency_ms: a.latencyMs,
    response: a.responseExcerpt,
    error: a.error,
  })),
});
