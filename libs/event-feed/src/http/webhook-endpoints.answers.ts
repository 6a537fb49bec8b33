import { z } from 'zod';
import type { WebhookEndpointView } from '../projections/webhook-endpoints/webhook-endpoints.projection';

export const webhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string(),
    types: z.array(z.string()).meta({ description: 'the event types sent, or ["*"] for every type' }),
    enabled: z.boolean(),
    disabled_reason: z
      .enum(['gone', 'failing'])
      .nullable()
      // null among the values, as OpenAPI 3.0 asks of a nullable enum (a `null` member instead breaks some generators).
      .meta({
        enum: ['gone', 'failing', null],
        description: 'why the service disabled it: its receiver answered 410 Gone, or failed every delivery for 5 days',
      }),
    failing_since: z.string().nullable().meta({ description: 'ISO 8601: since when every delivery failed; null while they succeed' }),
    created_at: z.string().meta({ description: 'ISO 8601 UTC' }),
  })
  .meta({
    id: 'WebhookEndpoint',
    description: "Where a partner's events are sent, and which",
    example: {
      id: 'we_k7Qp2',
      url: 'https://hooks.example.com/deals',
      description: 'orders',
      types: ['purchase.completed'],
      enabled: true,
      disabled_reason: null,
      failing_since: null,
      created_at: '2026-06-15T12:00:00.000Z',
    },
  });

export const toEndpoint = (view: WebhookEndpointView) => ({
  id: view._id,
  url: view.url,
  description: view.description,
  types: view.types,
  enabled: view.enabled,
  disabled_reason: view.disabledReason,
  failing_since: view.failingSince,
  created_at: view.createdAt,
});

const exampleSecretText = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const secret = z.string().meta({
  description: 'the signing secret (Standard Webhooks, whsec_…), shown this once: keep it to verify webhook-signature',
  example: exampleSecretText,
});

const exampleEndpoint = (webhookEndpointSchema.meta() as { example: Record<string, unknown> }).example;
const exampleSecret = exampleSecretText;

export const EndpointAnswer = z
  .object({ status: z.literal('success'), webhook_endpoint: webhookEndpointSchema })
  .meta({ example: { status: 'success', webhook_endpoint: exampleEndpoint } });
export const EndpointWithSecretAnswer = z
  .object({ status: z.literal('success'), webhook_endpoint: webhookEndpointSchema, secret })
  .meta({ example: { status: 'success', webhook_endpoint: exampleEndpoint, secret: exampleSecret } });
export const EndpointListAnswer = z
  .object({ status: z.literal('success'), webhook_endpoints: z.array(webhookEndpointSchema) })
  .meta({ example: { status: 'success', webhook_endpoints: [exampleEndpoint] } });
export const ReplayAnswer = z
  .object({
    status: z.literal('success'),
    queued: z.number().int().meta({ description: 'how many events are sent again (at most 1,000 a call)' }),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'the last event queued: give it as `after` to replay the rest; null when none was' }),
    has_more: z.boolean(),
  })
  .meta({ example: { status: 'success', queued: 42, next_cursor: 'evt_9bQ1xV0cKp3sWm2LrT8aYd4e', has_more: false } });
