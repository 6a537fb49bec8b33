import { requestDto, withPaging } from '@deals/wire';
import { z } from 'zod';
import { MAX_ROLLBACK_NOTE, ROLLBACK_REASONS } from '../domain/coupon/redemption-rollback';
import { MAX_REFUND_NOTE, REFUND_REASONS } from '../domain/refund/refund-rules';
import type { RefundTerms } from '../commands/refund-purchase/refund-purchase.command';

const MAX_ID = 128;
/** Coupons one refund may name: a purchase has at most this many. */
const MAX_COUPONS = 1000;

/** A reason from `reasons`, required, and an optional note of at most `maxNote` characters. */
function reasonAndNote<R extends readonly [string, ...string[]]>(
  reasons: R,
  maxNote: number,
  reason: { description: string; example: R[number] },
  note: { description: string; example: string },
) {
  return {
    reason: z
      .enum(reasons, { error: (issue) => (issue.input === undefined ? 'is required' : `must be one of ${reasons.join(', ')}`) })
      .meta(reason),
    note: z.string({ error: 'must be a string' }).max(maxNote, `must be at most ${maxNote} characters`).optional().meta(note),
  };
}

/** POST /purchases/:purchase_id/refunds. */
export const refundBody = z
  .strictObject({
    coupon_ids: z
      .array(
        z.string({ error: 'must be coupon ids' }).min(1, 'must be coupon ids').max(MAX_ID, `has an id longer than ${MAX_ID} characters`),
        {
          error: 'must be an array of coupon ids',
        },
      )
      .min(1, 'names no coupon; leave it out to refund every coupon the purchase may still refund')
      .max(MAX_COUPONS, `names more than ${MAX_COUPONS} coupons`)
      .optional()
      .meta({
        description: 'the coupons to refund; left out: every coupon of the purchase that may still be refunded',
        example: ['p7Hc2-1'],
      }),
    ...reasonAndNote(
      REFUND_REASONS,
      MAX_REFUND_NOTE,
      { description: 'why the money goes back', example: 'requested_by_customer' },
      { description: 'what support noted about it, kept with the refund', example: 'customer moved away' },
    ),
  })
  .meta({ 'x-resource': 'refund' })
  .transform((body): RefundTerms => ({ couponIds: body.coupon_ids ?? null, reason: body.reason, note: body.note ?? null, forced: false }));
export class RefundBody extends requestDto(refundBody) {}

/** GET /users/:user_id/refunds: `count`, `per_page`, `page`. */
export const refundListQuery = withPaging({}, 'refund');
export class RefundListQuery extends requestDto(refundListQuery) {}

/** POST /coupons/:coupon_id/redemption_rollbacks. */
export const rollbackBody = z
  .strictObject({
    ...reasonAndNote(
      ROLLBACK_REASONS,
      MAX_ROLLBACK_NOTE,
      { description: 'why the redemption is undone', example: 'redeemed_by_mistake' },
      { description: 'what the till or support noted, kept with the rollback', example: 'scanned the wrong phone' },
    ),
  })
  .meta({ 'x-resource': 'coupon' })
  .transform((body) => ({ reason: body.reason, note: body.note ?? null }));
export class RollbackBody extends requestDto(rollbackBody) {}
