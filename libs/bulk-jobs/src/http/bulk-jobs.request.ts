import { requestDto, withPaging } from '@deals/wire';
import { z } from 'zod';
import { MAX_BULK_ITEMS } from '../domain/bulk-job.decider';
import { BULK_JOB_KINDS } from '../domain/bulk-job.events';

/** A reference's characters: none a control character or a lone surrogate (which no store keeps as text). */
const PRINTABLE = /^[^\p{Cc}\p{Cs}]*$/u;

/** The most characters of an item's reference. */
export const MAX_REFERENCE = 200;

const item = z
  .looseObject({
    reference: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(MAX_REFERENCE, `must be at most ${MAX_REFERENCE} characters`)
      .refine((reference) => PRINTABLE.test(reference), 'must hold no control character and no lone surrogate')
      .refine((reference) => !reference.includes('@'), 'must be an identifier of yours, never personal data such as an email address')
      .meta({
        description:
          "the partner's own name of the item, unique in the job: an item whose reference an earlier job of the same kind did is answered `already_done`, not done again. An identifier, never personal data (it is kept as sent)",
        example: 'crm-000412',
      }),
  })
  .meta({
    description:
      'the fields of the single call the item stands for, with its reference: users, POST /users (made, or matched by email); ' +
      'saved_deals, POST /saved_deals (user_id, deal_id); subscriptions, POST /users/:user_id/subscriptions (user_id, zip, source); ' +
      'coupon_redemptions, PUT /coupons/:coupon_id/redeem (coupon_id; with user_id, that user’s coupon only)',
    example: { reference: 'crm-000412', email: 'ana@example.com', first_name: 'Ana' },
  });

/** POST /v1/bulk_jobs. */
export const createBulkJobBody = z
  .strictObject({
    kind: z
      .enum(BULK_JOB_KINDS, { error: `must be one of ${BULK_JOB_KINDS.join(', ')}` })
      .meta({ description: 'what each item is: the single call it stands for', example: 'users' }),
    items: z
      .array(item, { error: 'must be a list of items' })
      .min(1, 'must hold at least one item')
      .max(MAX_BULK_ITEMS, `must hold at most ${MAX_BULK_ITEMS.toLocaleString('en-US')} items`)
      .superRefine((items, ctx) => {
        const first = new Map<string, number>();
        items.forEach(({ reference }, index) => {
          const seen = first.get(reference);
          if (seen === undefined) first.set(reference, index);
          else
            ctx.addIssue({
              code: 'custom',
              path: [index, 'reference'],
              // eslint-disable-next-line no-restricted-syntax -- the other item's position, not its value
              message: `is the reference of item ${seen} too: each item's is its own`,
            });
        });
      })
      .meta({ description: `1 to ${MAX_BULK_ITEMS.toLocaleString('en-US')} items, run in this order` }),
  })
  .meta({ 'x-resource': 'bulk_job' });
export class CreateBulkJobBody extends requestDto(createBulkJobBody) {}

export const bulkJobParams = z
  .object({ bulk_job_id: z.string().max(MAX_REFERENCE).meta({ description: 'the bulk job', example: 'bj_Px3mR0aQ7vK2sL9dN1' }) })
  .meta({ 'x-resource': 'bulk_job' });
export class BulkJobParams extends requestDto(bulkJobParams) {}

export const bulkJobListQuery = withPaging({}, 'bulk_job');
export class BulkJobListQuery extends requestDto(bulkJobListQuery) {}

export const bulkJobResultsQuery = withPaging({}, 'bulk_job');
export class BulkJobResultsQuery extends requestDto(bulkJobResultsQuery) {}
