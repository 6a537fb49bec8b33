import { unknownWords } from '@deals/kernel';
import { flag, requestDto, wholeNumberField } from '@deals/wire';
import { z } from 'zod';
import { FEED_EVENT_TYPES, isFeedEventType } from '../domain/feed-event';

const MAX_ID = 128;
const DESCRIPTION_MAX = 500;

const url = z.string({ error: 'must be an https:// URL' }).min(1, 'is required').meta({
  description: 'where to POST the events: https, no credentials in it, at most 2,048 characters',
  example: 'https://hooks.example.com/deals',
});

/** The event types an endpoint wants: a list (or comma-separated text) of known types, or `*` for all. */
const types = z
  .union([z.string(), z.array(z.string())], { error: 'must be a list of event types, or * for all' })
  .transform((value, ctx) => {
    const words = [...new Set((Array.isArray(value) ? value : value.split(',')).map((w) => w.trim()).filter(Boolean))];
    const unknown = words.filter((w) => w !== '*' && !isFeedEventType(w));
    if (words.length === 0 || unknown.length) {
      ctx.addIssue({
        code: 'custom',
        message: words.length === 0 ? 'is required' : `names ${unknownWords(unknown)}; known event types: ${FEED_EVENT_TYPES.join(', ')}`,
      });
      return z.NEVER;
    }
    return words.includes('*') ? ['*'] : words;
  })
  .meta({
    description: 'the event types to send (a list, or comma-separated text), or ["*"] for every type',
    example: ['purchase.completed', 'coupon.redeemed'],
  });

const description = z
  .string({ error: 'must be a string' })
  .max(DESCRIPTION_MAX, `must be at most ${DESCRIPTION_MAX} characters`)
  .meta({ description: "the partner's own note of what the endpoint is" });

/** POST /v1/webhook_endpoints. */
export const createEndpointBody = z
  .strictObject({
    url,
    types,
    description: description.optional(),
    enabled: flag('must be true or false', 'false: registered but sent nothing (default true)'),
  })
  .meta({ 'x-resource': 'webhook_endpoint' })
  .transform((v) => ({ url: v.url, types: v.types, description: v.description ?? '', enabled: v.enabled ?? true }));
export class CreateEndpointBody extends requestDto(createEndpointBody) {}

/** PUT /v1/webhook_endpoints/:endpoint_id: what is given changes; `enabled: true` enables one the service disabled. */
export const updateEndpointBody = z
  .strictObject({
    url: url.optional(),
    types: types.optional(),
    description: description.optional(),
    enabled: flag('must be true or false', 'enable or disable it'),
  })
  .meta({ 'x-resource': 'webhook_endpoint' });
export class UpdateEndpointBody extends requestDto(updateEndpointBody) {}

export const endpointPathParams = z
  .object({
    endpoint_id: z.string().max(MAX_ID, `must be at most ${MAX_ID} characters`).meta({ description: 'the endpoint', example: 'we_k7Qp2' }),
  })
  .meta({ 'x-resource': 'webhook_endpoint' });
export class EndpointPathParams extends requestDto(endpointPathParams) {}

/** GET /v1/webhook_endpoints/:endpoint_id/deliveries: latest first. */
export const deliveryListQuery = z
  .object({
    per_page: wholeNumberField(
      'must be a whole number from 1 to 1000',
      (n) => n >= 1 && n <= 1000,
      'deliveries a page, 1 to 1000 (default 100)',
    ),
    page: wholeNumberField('must be a whole number from 1', (n) => n >= 1, 'page number from 1 (default 1)'),
  })
  .meta({ 'x-resource': 'webhook_endpoint' })
  .transform((v) => ({ perPage: v.per_page ?? 100, page: v.page ?? 1 }));
export class DeliveryListQuery extends requestDto(deliveryListQuery) {}

const eventId = (description: string) =>
  z.string({ error: 'must be an event id' }).max(MAX_ID, `must be at most ${MAX_ID} characters`).meta({ description });

/** POST /v1/webhook_endpoints/:endpoint_id/replay: the endpoint's types of events after one, up to another, sent again. */
export const replayBody = z
  .strictObject({
    after: eventId('send the events after this one (a cursor, as GET /v1/events gives); none: from the first').optional(),
    until: eventId('and up to this one, included; none: up to the latest').optional(),
  })
  .meta({ 'x-resource': 'webhook_endpoint' })
  .transform((v) => ({ after: v.after ?? null, until: v.until ?? null }));
export class ReplayBody extends requestDto(replayBody) {}
