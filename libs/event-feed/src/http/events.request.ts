import { unknownWords } from '@deals/kernel';
import { requestDto, wholeNumberField } from '@deals/wire';
import { z } from 'zod';
import { FEED_EVENT_TYPES, FeedEventType, isFeedEventType } from '../domain/feed-event';

const MAX_ID = 128;
const id = (description: string) =>
  z.string({ error: 'must be a string' }).max(MAX_ID, `must be at most ${MAX_ID} characters`).meta({ description });

/** Event types as a comma-separated list (or an array): each one the feed knows. */
export const eventTypes = (description: string) =>
  z
    .union([z.string(), z.array(z.string())], { error: 'must be a comma-separated list of event types' })
    .optional()
    .transform((value, ctx): FeedEventType[] => {
      const words = (Array.isArray(value) ? value : (value ?? '').split(',')).map((w) => w.trim()).filter(Boolean);
      const unknown = words.filter((w) => !isFeedEventType(w));
      if (unknown.length) {
        ctx.addIssue({
          code: 'custom',
          message: `names ${unknownWords(unknown)}; known event types: ${FEED_EVENT_TYPES.join(', ')}`,
        });
        return z.NEVER;
      }
      return [...new Set(words)] as FeedEventType[];
    })
    // Described as the query's text (a repeated parameter is taken too), not as the union it parses.
    .meta({ type: 'string', anyOf: undefined, description, example: 'purchase.completed,coupon.redeemed' });

/** GET /v1/events: the partner's events in log order, after a cursor. */
export const eventListQuery = z
  .object({
    after: id('a cursor: the id of the last event already read (`next_cursor` of the page before); none: from the first').optional(),
    types: eventTypes('only these event types, comma-separated; none: every type'),
    resource_id: id("only the events of this resource (a purchase's, a coupon's, a user's ... id)").optional(),
    per_page: wholeNumberField(
      'must be a whole number from 1 to 1000',
      (n) => n >= 1 && n <= 1000,
      'events a page, 1 to 1000 (default 100)',
    ),
  })
  .meta({ 'x-resource': 'event' })
  .transform((v) => ({ after: v.after ?? null, types: v.types, resourceId: v.resource_id ?? null, perPage: v.per_page ?? 100 }));
export class EventListQuery extends requestDto(eventListQuery) {}

export const eventPathParams = z.object({ event_id: id('the event') }).meta({ 'x-resource': 'event' });
export class EventPathParams extends requestDto(eventPathParams) {}

/** POST /v1/events/:event_id/redeliver: to one endpoint, or to every enabled endpoint listening for its type. */
export const redeliverBody = z
  .strictObject({ endpoint_id: id('the endpoint to send it to again; none: every enabled endpoint listening for its type').optional() })
  .meta({ 'x-resource': 'event' })
  .transform((v) => ({ endpointId: v.endpoint_id ?? null }));
export class RedeliverBody extends requestDto(redeliverBody) {}
