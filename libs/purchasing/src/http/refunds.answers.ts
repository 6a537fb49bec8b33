import { humanUtc } from '@deals/wire';
import { z } from 'zod';
import { REFUND_REASONS } from '../domain/refund/refund-rules';
import type { RefundDetails } from '../projections/refund-details/refund-details.projection';

export const refundSchema = z
  .object({
    id: z.string().meta({ description: 'refund identifier' }),
    purchase_id: z.string(),
    user_id: z.string().nullable(),
    coupon_ids: z.array(z.string()).meta({ description: 'the coupons it pays back (void once it succeeds)' }),
    amount: z.number().int().meta({ description: 'what it pays back, cents: the sum of its coupons’ shares of what was paid' }),
    reason: z.enum(REFUND_REASONS),
    note: z.string().nullable(),
    forced: z.boolean().meta({ description: 'an operator refunded coupons the rules keep (redeemed, expired, shipped)' }),
    state: z.enum(['pending', 'succeeded', 'failed']).meta({ description: 'pending until the processor answers' }),
    failure_reason: z.string().nullable().meta({ description: 'why it failed: its coupons may be refunded again' }),
    created_at: z.string().meta({ description: 'human-readable UTC text' }),
    settled_at: z.string().nullable().meta({ description: 'when it succeeded or failed, human-readable UTC text' }),
  })
  .meta({ id: 'Refund', description: 'money of some coupons of a purchase given back' });

const exampleRefund = {
  id: 'r8Kq1',
  purchase_id: 'p7Hc2',
  user_id: 'u4Kd8',
  coupon_ids: ['p7Hc2-1'],
  amount: 4900,
  reason: 'requested_by_customer',
  note: null,
  forced: false,
  state: 'succeeded',
  failure_reason: null,
  created_at: 'Mon Jun 15 12:00:00 UTC 2026',
  settled_at: 'Mon Jun 15 12:00:01 UTC 2026',
};

export const RefundAnswer = z
  .object({ status: z.literal('success'), refund: refundSchema })
  .meta({ example: { status: 'success', refund: exampleRefund } });

const countAnswer = z.object({ status: z.literal('success'), count: z.number().int() });

export const RefundListAnswer = z
  .union([z.object({ status: z.literal('success'), refunds: z.array(refundSchema) }), countAnswer])
  .meta({ example: { status: 'success', refunds: [exampleRefund] } });

export function toRefund(refund: RefundDetails): z.infer<typeof refundSchema> {
  return {
    id: refund._id,
    purchase_id: refund.purchaseId,
    user_id: refund.userId,
    coupon_ids: refund.couponIds,
    amount: refund.amountCents,
    reason: refund.reason,
    note: refund.note,
    forced: refund.forced,
    state: refund.state,
    failure_reason: refund.failureReason,
    created_at: humanUtc(refund.createdAt),
    settled_at: refund.settledAt ? humanUtc(refund.settledAt) : null,
  };
}
