import { isoInstant, xmlDateTimeInstant } from '@deals/kernel';
import { requestDto } from '@deals/wire';
import { z } from 'zod';
import type { BatchMode } from '../domain/batch/batch.events';
import { USER_IDS_PER_REQUEST } from '../domain/batch/batch-rules';

const REQUIRED = 'is required';
const absent = (value: unknown) => value === undefined || value === null || value === '';
const MAX_ID = 128;

/** A field that must be there: absent, null or '' is "is required". */
const required = <T extends z.ZodType>(schema: T) =>
  z
    .unknown()
    .optional()
    .transform((value, ctx) => {
      if (absent(value)) {
        ctx.addIssue({ code: 'custom', message: REQUIRED });
        return z.NEVER;
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        for (const i of parsed.error.issues) ctx.addIssue({ code: 'custom', message: i.message, path: i.path as PropertyKey[] as never });
        return z.NEVER;
      }
      return parsed.data as z.output<T>;
    });

const dealId = z.string({ error: 'must be a string' }).max(MAX_ID, `must be at most ${MAX_ID} characters`);

const SEND_AT = 'must be an ISO 8601 time, UTC (2026-06-16T09:00:00Z)';
const sendAt = z.string({ error: SEND_AT }).transform((text, ctx) => {
  const at = text.length <= 64 ? (isoInstant(text) ?? xmlDateTimeInstant(text)) : null;
  if (!at) {
    ctx.addIssue({ code: 'custom', message: SEND_AT });
    return z.NEVER;
  }
  return at;
});

const userIds = z
  .array(z.string({ error: 'must be an array of user ids (strings)' }).max(MAX_ID, `has an id longer than ${MAX_ID} characters`), {
    error: 'must be an array of user ids (strings)',
  })
  .min(1, REQUIRED)
  .max(USER_IDS_PER_REQUEST, `must name at most ${USER_IDS_PER_REQUEST} users`);

const mode = z.enum(['suppress', 'augment'], { error: 'must be either (suppress or augment)' });

/**
 * POST /v1/targeted_email/batches: every field checked at once, each refusal a fixed message on
 * its field. Parameters in the JSON body (or the query).
 */
export const createBatchParams = z
  .object({
    deal_id: required(dealId).meta({
      type: 'string',
      minLength: 1,
      maxLength: MAX_ID,
      description: 'the deal the email is about',
      example: 'chicago-spa-day',
    }),
    user_ids: required(userIds).meta({
      type: 'array',
      items: { type: 'string', maxLength: MAX_ID },
      minItems: 1,
      maxItems: USER_IDS_PER_REQUEST,
      description: `the users to email, at most ${USER_IDS_PER_REQUEST}; unknown ones, and those already in another batch of that day, are dropped`,
      example: ['u4Kd8', 'u9Tz1'],
    }),
    mode: required(mode).meta({
      type: 'string',
      enum: ['suppress', 'augment'],
      description: 'suppress: no daily email for these users that day; augment: the daily email too',
      example: 'suppress',
    }),
    send_at: required(sendAt).meta({
      type: 'string',
      format: 'date-time',
      description: "UTC, tomorrow (from tonight's midnight to tomorrow's), within the deal's run",
      example: '2026-06-16T09:00:00Z',
    }),
  })
  // Each field takes absent to refuse it with its own message: described as required here.
  .meta({ 'x-resource': 'batch', required: ['deal_id', 'user_ids', 'mode', 'send_at'] })
  .transform((v) => ({
    dealId: v.deal_id as string,
    userIds: v.user_ids as string[],
    mode: v.mode as BatchMode,
    sendAt: v.send_at as Date,
  }));
export class CreateBatchParams extends requestDto(createBatchParams) {}

/** GET and DELETE /v1/targeted_email/batches/:batch_id: the `deal_id` guard, in the query or the body. */
export const batchGuardParams = z
  .object({
    deal_id: required(dealId).meta({
      type: 'string',
      minLength: 1,
      maxLength: MAX_ID,
      description: "the batch's deal: a guard that the batch is this deal's",
      example: 'chicago-spa-day',
    }),
  })
  .meta({ 'x-resource': 'batch', required: ['deal_id'] });
export class BatchGuardParams extends requestDto(batchGuardParams) {}

export const batchPathParams = z
  .object({ batch_id: z.string().max(MAX_ID, `must be at most ${MAX_ID} characters`).meta({ description: 'the batch', example: 'b7Kq2' }) })
  .meta({ 'x-resource': 'batch' });
export class BatchPathParams extends requestDto(batchPathParams) {}
