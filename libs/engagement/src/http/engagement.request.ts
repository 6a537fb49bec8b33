import { requestDto, withPaging } from '@deals/wire';
import { z } from 'zod';
import type { SubscriptionStatus } from '../domain/subscription/subscription.decider';
import { MAX_ID } from './card-links.request';

const idText = (description: string, example: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : 'must be a string') })
    .min(1, 'is required')
    .max(MAX_ID, `must be at most ${MAX_ID} characters`)
    .meta({ description, example });

/** POST /saved_deals. With partner credentials `user_id` is required; a user's access token saves for its own user. */
export const saveDealBody = z
  .object({
    deal_id: idText('a public deal', 'chicago-spa-day'),
    user_id: idText('the user (a user’s access token saves for its own user)', 'u4Kd8').optional(),
  })
  .meta({ 'x-resource': 'saved_deal' });
export class SaveDealBody extends requestDto(saveDealBody) {}

export const savedDealParams = z
  .object({ saved_deal_id: idText('the saved deal', '3f9a0c1d2b7e4a5c6d8e') })
  .meta({ 'x-resource': 'saved_deal' });
export class SavedDealParams extends requestDto(savedDealParams) {}

/** The saved-deal and subscription lists: `count`, `per_page`, `page`. */
export const savedDealListQuery = withPaging({}, 'saved_deal');
export class SavedDealListQuery extends requestDto(savedDealListQuery) {}
export const subscriptionListQuery = withPaging({}, 'subscription');
export class SubscriptionListQuery extends requestDto(subscriptionListQuery) {}

const ZIP = 'must be a US zip code: up to 5 digits (leading zeros may be left out), as a number or a string';

/**
 * The subscription's `zip`: a whole number or digits, read as five digits with the
 * leading zeros a number cannot carry (`2134` and `"02134"` are one Boston zip); ZIP+4 keeps its first five.
 */
export const zipField = z
  .union([z.number(), z.string()], { error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : ZIP) })
  .transform((value, ctx) => {
    const text =
      typeof value === 'number' ? (Number.isInteger(value) && value >= 0 && value <= 99_999 ? String(value) : null) : value.trim();
    const m = text === null ? null : /^(\d{1,5})(-\d{4})?$/.exec(text);
    if (!m || (m[2] && m[1].length !== 5)) {
      ctx.addIssue({ code: 'custom', message: text === '' ? 'is required' : ZIP });
      return z.NEVER;
    }
    return m[1].padStart(5, '0');
  })
  .meta({
    anyOf: [
      { type: 'integer', minimum: 0, maximum: 99_999 },
      { type: 'string', pattern: '^\\s*(\\d{1,5}|\\d{5}-\\d{4})\\s*$' },
    ],
    description: 'the zip whose region to subscribe to, a number or digits; leading zeros may be left out (2134 is 02134)',
    example: 2134,
  });

/** POST /users/:user_id/subscriptions. */
export const subscribeBody = z
  .object({
    zip: zipField,
    source: z
      .string({ error: 'must be a string' })
      .max(200, 'must be at most 200 characters')
      .optional()
      .meta({ description: "where the subscription came from, for reporting; default: the user's signup source", example: 'footer-form' }),
  })
  .meta({ 'x-resource': 'subscription' });
export class SubscribeBody extends requestDto(subscribeBody) {}

export const subscriptionParams = z
  .object({ subscription_id: idText('the subscription', '7c2e9b0a4d1f3e5a6b8c') })
  .meta({ 'x-resource': 'subscription' });
export class SubscriptionParams extends requestDto(subscriptionParams) {}

const STATUSES: SubscriptionStatus[] = ['active', 'inactive'];
/** PUT /subscriptions/:id. */
export const subscriptionStatusBody = z
  .object({
    status: z
      .enum(STATUSES, {
        error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : 'must be active or inactive'),
      })
      .meta({ description: 'active or inactive', example: 'inactive' }),
  })
  .meta({ 'x-resource': 'subscription' });
export class SubscriptionStatusBody extends requestDto(subscriptionStatusBody) {}
