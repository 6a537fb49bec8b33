import { z } from 'zod';
import { couponSchema, purchaseSchema } from './purchase.answers';
import { streamSealSchema } from '@deals/wire';

/** Answer schemas of the purchasing calls beyond a single purchase (`PurchaseAnswer`): lists, coupons, reseller sales. */

/** `{status, count}`: a list call's answer with `count=true` (docs/api.md, Paging). */
const countAnswer = z.object({ status: z.literal('success'), count: z.number().int() });

const exampleCoupon = (couponSchema.meta() as { example: Record<string, unknown> }).example;

export const PurchaseListAnswer = z
  .union([z.object({ status: z.literal('success'), purchases: z.array(purchaseSchema) }), countAnswer])
  .meta({ example: { status: 'success', count: 3 } });

export const CouponAnswer = z
  .object({ status: z.literal('success'), coupon: couponSchema })
  .meta({ example: { status: 'success', coupon: { ...exampleCoupon, state: 'redeemed', redeemed_at: 'Mon Jun 15 12:30:00 UTC 2026' } } });

export const CouponListAnswer = z
  .union([z.object({ status: z.literal('success'), coupons: z.array(couponSchema) }), countAnswer])
  .meta({ example: { status: 'success', coupons: [exampleCoupon] } });

/** A coupon as the reseller calls answer it: without `print_url`. */
const resellerCoupon = couponSchema
  .omit({ print_url: true })
  .meta({ id: 'ResellerCoupon', description: 'a coupon as the reseller calls answer it (without print_url)' });
const { print_url: _printUrl, ...exampleResellerCoupon } = exampleCoupon;

/** The purchase's smaller object, for a sale a reseller recorded. */
export const ResellerPurchaseAnswer = z
  .object({
    id: z.string(),
    transaction_reference: z.string().meta({ description: "the partner's own reference; a repeat answers the first sale" }),
    amount: z.number().int().meta({ description: 'cents' }),
    number_bought: z.number().int(),
    fulfillment_state: z.enum(['reserved', 'fulfilled', 'released']),
    created_at: z.string().meta({ description: 'human-readable UTC text' }),
    deal: z.object({ id: z.string(), title: z.string(), image_url_abs: z.string() }),
    coupons: z.array(resellerCoupon),
  })
  .meta({
    id: 'ResellerPurchase',
    description: 'a sale a reseller recorded (the smaller purchase object)',
    example: {
      id: 'Pq3Rt9x',
      transaction_reference: 'order-20260615-0042',
      amount: 4900,
      number_bought: 1,
      fulfillment_state: 'fulfilled',
      created_at: 'Mon Jun 15 12:00:00 UTC 2026',
      deal: {
        id: 'chicago-spa-day',
        title: 'A day at the spa',
        image_url_abs: 'https://images.example.com/images/deals/chicago-spa-day.jpg',
      },
      coupons: [exampleResellerCoupon],
    },
  });

export const ResellerCouponAnswer = z.object({ coupon: resellerCoupon }).meta({ example: { coupon: exampleResellerCoupon } });

export const CancelAnswer = z.object({ status: z.literal('success') }).meta({ example: { status: 'success' } });

/** DELETE /api/v3/resellers/purchases/:purchase_id/buyer. */
export const ResaleBuyerErasureAnswer = z
  .object({
    status: z.literal('success'),
    purchase_id: z.string(),
    erased_at: z.string().meta({ description: "when the buyer was erased (ISO 8601); the first erasure's, asked again" }),
  })
  .meta({ example: { status: 'success', purchase_id: 'p7Qw2', erased_at: '2026-11-27T10:15:00.000Z' } });

/** The reseller coupon error body: a coupon that is not found. */
export const ResellerNotFound = z
  .object({ status: z.literal('error'), message: z.string(), type: z.literal('find_failed') })
  .meta({ example: { status: 'error', message: 'coupon not found', type: 'find_failed' } });

/**
 * The reseller coupon error body: a coupon that cannot be cancelled, with the reasons; every 422 of
 * the cancel is in it. A request refused before the coupon is looked at keeps the error body's
 * `error_type` and `error_msg` (and `answered_status`) beside (reseller-coupon-errors.ts).
 */
export const ResellerNotCancelled = z
  .object({
    status: z.literal('error'),
    message: z.string(),
    code: z.literal('422'),
    errors: z.object({ coupons: z.array(z.string()).meta({ description: 'the reasons, each naming the rule broken' }) }),
    error_type: z
      .string()
      .optional()
      .meta({
        description:
          'only on a request refused before the coupon is looked at, as in the error body: idempotency_key_reused, ' +
          'idempotent_answer_not_kept, validation_failed',
      }),
    error_msg: z.string().optional().meta({ description: "with error_type: the error body's message (the same as message)" }),
    answered_status: z.number().int().optional().meta({
      description: 'with idempotent_answer_not_kept: the status the request sent first with this Idempotency-Key was answered',
    }),
  })
  .meta({
    example: {
      status: 'error',
      message: 'the coupon cannot be cancelled',
      code: '422',
      errors: { coupons: ['the coupon is in a non-refundable state'] },
    },
  });

const auditEntry = z
  .object({
    position: z.string().meta({ description: 'position in the event log' }),
    occurredAt: z.string(),
    stream: z.string(),
    type: z.string().meta({ description: 'the event type, e.g. UnitsHeld, PurchaseCharged, CouponIssued' }),
    actor: z.string().nullable(),
    partnerId: z.string().nullable(),
    requestId: z.string().nullable(),
    correlationId: z.string().nullable(),
    data: z.unknown().meta({ description: "the event's facts; coupons' codes show only their last four characters" }),
    purchaseState: z.string().meta({ description: 'the purchase after this event' }),
  })
  .meta({ id: 'AuditEvent', description: 'one event of a purchase, with who caused it' });

export const AuditAnswer = z
  .object({ status: z.literal('success'), purchase_id: z.string(), events: z.array(auditEntry), seal: streamSealSchema })
  .meta({
    example: {
      status: 'success',
      purchase_id: 'Pq3Rt9x',
      events: [
        {
          position: '00000000000000000042',
          occurredAt: '2026-06-15T12:00:00.000Z',
          stream: 'inventory-chicago-spa-day',
          type: 'UnitsHeld',
          actor: 'partner:p1',
          partnerId: 'p1',
          requestId: 'r-1',
          correlationId: 'r-1',
          data: { dealId: 'chicago-spa-day', holdId: 'Pq3Rt9x', quantity: 1 },
          purchaseState: 'reserved',
        },
      ],
      seal: {
        algorithm: 'Ed25519',
        public_key: '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n',
        stream: 'purchase-Pq3Rt9x',
        events: [
          {
            position: '00000000000000000041',
            revision: 0,
            id: 'e5b1c0de-8d1a-4f2e-9d7c-0b6f1c2a3d4e',
            type: 'PurchaseReserved',
            data: { purchaseId: 'Pq3Rt9x', quantity: 1 },
            metadata: { occurredAt: '2026-06-15T12:00:00.000Z', actor: 'partner:p1' },
            hash: '9f2c'.repeat(16),
            link: '41d7'.repeat(16),
            checkpoint: 7,
            index: 3,
            proof: [{ side: 'left', hash: '0c1e'.repeat(16) }],
          },
        ],
        removed: [],
        checkpoints: [
          {
            number: 7,
            previous: '77aa'.repeat(16),
            from_position: '00000000000000000038',
            to_position: '00000000000000000045',
            count: 8,
            root: '5be0'.repeat(16),
            sealed_at: '2026-06-15T12:00:10.000Z',
            signature: 'q3Jx...',
          },
        ],
      },
    },
  });
