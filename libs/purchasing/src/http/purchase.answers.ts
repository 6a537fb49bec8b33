import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CatalogLinks } from '@deals/catalog';
import { humanUtc } from '@deals/wire';
import { z } from 'zod';
import { couponState } from '../domain/coupon/coupon.decider';
import type { DealSnapshot } from '../domain/purchase/purchase.events';
import type { CouponDetails } from '../projections/coupon-details/coupon-details.projection';
import { fulfillmentStateAt, type PurchaseDetails } from '../projections/purchase-details/purchase-details.projection';
import type { RefundDetails } from '../projections/refund-details/refund-details.projection';
import { refundSchema, toRefund } from './refunds.answers';

export abstract class CouponLinks {
  /** This API's address, where coupons' QR images and printable pages are served. */
  abstract readonly apiBaseUrl: string;
  /** The key a coupon's public links carry: only who was given the link can open it. */
  abstract keyOf(couponId: string): string;
  /** Whether `key` is the coupon's link key (compared in constant time). */
  abstract opens(couponId: string, key: string | undefined): boolean;
}

/**
 * Links keyed by an installation secret: HMAC-SHA256 of the coupon id, 128 bits. A coupon id is
 * its purchase's id and a number, and purchase ids travel (addresses, logs, error bodies); the
 * key does not, so knowing a purchase id no longer opens its coupons' printable page and code.
 */
export class KeyedCouponLinks extends CouponLinks {
  constructor(
    readonly apiBaseUrl: string,
    private readonly secret: Buffer,
  ) {
    super();
  }

  keyOf(couponId: string): string {
    return createHmac('sha256', this.secret).update(`coupon-link\n${couponId}`).digest('base64url').slice(0, 22);
  }

  opens(couponId: string, key: string | undefined): boolean {
    if (key === undefined) return false;
    const expected = Buffer.from(this.keyOf(couponId));
    const given = Buffer.from(key);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** A coupon, with both documented names of the QR image and data (kept for compatibility). */
export function toCoupon(coupon: CouponDetails, now: number, links: CouponLinks, qrBase64: string | null, withPrintUrl = true) {
  const key = links.keyOf(coupon._id);
  const qrUrl = `${links.apiBaseUrl}/coupons/${coupon._id}/qr.png?key=${key}`;
  return {
    id: coupon._id,
    slug: coupon._id,
    deal_id: coupon.dealId,
    deal_type: coupon.dealType,
    barcode: coupon.barcode,
    redemption_code: coupon.redemptionCode,
    expires_at: coupon.expiresAt === null ? null : humanUtc(new Date(coupon.expiresAt)),
    created_at: humanUtc(coupon.issuedAt),
    state: couponState(coupon, now),
    redeemed_at: coupon.redeemedAt ? humanUtc(coupon.redeemedAt) : null,
    qrcode_url: qrUrl,
    qr_code_url: qrUrl,
    qrcode_base64: qrBase64,
    qr_code: qrBase64,
    ...(withPrintUrl ? { print_url: `${links.apiBaseUrl}/coupons/${coupon._id}/print?key=${key}` } : {}),
  };
}

/**
 * A purchase as it stands at `now` (epoch ms: a reservation whose hold lapsed reads released).
 * `amount` is the purchase total (unit price × number bought) in cents.
 */
export function toPurchase(purchase: PurchaseDetails, coupons: unknown[] | null, catalog: CatalogLinks, now: number) {
  return {
    id: purchase._id,
    purchase_id: purchase._id,
    deal_type: purchase.deal.type,
    deal_id: purchase.deal.dealId,
    price: purchase.deal.unitPrice,
    amount: purchase.amountCents,
    number_bought: purchase.quantity,
    payment_state: purchase.paymentState,
    fulfillment_state: fulfillmentStateAt(purchase, now),
    created_at: humanUtc(purchase.createdAt),
    // A card purchase still being charged (or settled later) names its buyer and card already.
    user_id: purchase.userId ?? purchase.paymentIntent?.userId ?? null,
    credit_card_id: purchase.creditCardId ?? purchase.paymentIntent?.creditCardId ?? null,
    deal: toPurchaseDeal(purchase.deal, catalog),
    coupons,
    // Only once it has a refund: every other purchase answers exactly as it always has.
    ...(purchase.refunds?.length ? { amount_refunded: refundedCents(purchase.refunds), refunds: purchase.refunds.map(toRefund) } : {}),
    // Only a gift's: every other purchase answers exactly as it always has.
    ...(purchase.gift ? { gift: toGift(purchase.gift) } : {}),
  };
}

/** A gift's recipient and mail (never its name or message: personal data, kept in the log only). */
function toGift(gift: NonNullable<PurchaseDetails['gift']>) {
  return {
    recipient_user_id: gift.recipientUserId,
    deliver_at: gift.deliverAt,
    mail_state: gift.mail,
    mailed_at: gift.mailedAt,
  };
}

/** A purchase's deal, in summary. */
export function toPurchaseDeal(deal: DealSnapshot, catalog: CatalogLinks) {
  const image = deal.imageUrl ?? `/images/deals/${deal.dealId}.jpg`;
  return {
    id: deal.dealId,
    deal_id: deal.dealId,
    title: deal.title,
    type: deal.type,
    image_url: image,
    image_url_abs: `${catalog.imageBaseUrl}${image}`,
  };
}

/** What its refunds gave back so far: those that succeeded. */
const refundedCents = (refunds: readonly RefundDetails[]) =>
  refunds.reduce((sum, refund) => sum + (refund.state === 'succeeded' ? refund.amountCents : 0), 0);

const HUMAN_UTC = 'human-readable UTC text (not ISO 8601)';
const EXAMPLE_QR = 'iVBORw0KGgoAAAANSUhEUgAAAB0AAAAdAQAAAAB+6FqiAAAA...';
const EXAMPLE_API = 'https://api.example.com';

/** The coupon, as {@link toCoupon} writes it: one coupon of a purchase (reseller answers omit print_url). */
export const couponSchema = z
  .object({
    id: z.string().meta({ description: 'coupon identifier: the purchase id and the coupon number', example: 'p7Hc2-1' }),
    slug: z.string().meta({ description: 'the same identifier (purchase-call documentation)' }),
    deal_id: z.string(),
    deal_type: z.string().meta({ description: 'daily-deal, on-going or card-linked', example: 'daily-deal' }),
    barcode: z.string().meta({ description: 'barcode for redemption' }),
    redemption_code: z.string().nullable().meta({ description: 'code for redemption' }),
    expires_at: z
      .string()
      .nullable()
      .meta({ description: `expiry, ${HUMAN_UTC}; null for a coupon that never expires` }),
    created_at: z.string().meta({ description: HUMAN_UTC }),
    state: z.enum(['valid', 'cancelled', 'expired', 'redeemed', 'reissued']),
    redeemed_at: z
      .string()
      .nullable()
      .meta({ description: `redemption time, ${HUMAN_UTC}` }),
    qrcode_url: z.string().meta({ description: 'the QR image URL (documented name)' }),
    qr_code_url: z.string().meta({ description: 'the QR image URL (name used in bodies)' }),
    qrcode_base64: z.string().meta({ description: 'the QR image, PNG in base64 (documented name)' }),
    qr_code: z.string().meta({ description: 'the QR image, PNG in base64 (name used in bodies)' }),
    print_url: z.string().meta({ description: 'printable coupon page (not in reseller answers)' }),
  })
  .meta({
    id: 'Coupon',
    description: 'a coupon',
    example: {
      id: 'p7Hc2-1',
      slug: 'p7Hc2-1',
      deal_id: 'chicago-spa-day',
      deal_type: 'daily-deal',
      barcode: '4019283746501',
      redemption_code: 'K7QF-2M9X',
      expires_at: 'Tue Sep 15 12:00:00 UTC 2026',
      created_at: 'Mon Jun 15 12:00:00 UTC 2026',
      state: 'valid',
      redeemed_at: null,
      qrcode_url: `${EXAMPLE_API}/coupons/p7Hc2-1/qr.png?key=Zx9…`,
      qr_code_url: `${EXAMPLE_API}/coupons/p7Hc2-1/qr.png?key=Zx9…`,
      qrcode_base64: EXAMPLE_QR,
      qr_code: EXAMPLE_QR,
      print_url: `${EXAMPLE_API}/coupons/p7Hc2-1/print?key=Zx9…`,
    },
  });

/** A purchase's deal, as {@link toPurchaseDeal} writes it. */
export const purchaseDealSchema = z
  .object({
    id: z.string(),
    deal_id: z.string(),
    title: z.string(),
    type: z.string(),
    image_url: z.string().meta({ description: 'relative' }),
    image_url_abs: z.string().meta({ description: 'absolute' }),
  })
  .meta({ id: 'PurchaseDeal', description: "the purchase's deal, in summary" });

/** A gift's recipient and mail, as {@link toPurchase} writes it. */
const giftSchema = z
  .object({
    recipient_user_id: z
      .string()
      .meta({ description: 'the user who holds the coupons (made from the gift’s email, or the user it names)' }),
    deliver_at: z
      .string()
      .nullable()
      .meta({ description: 'when the recipient is mailed the gift, ISO 8601; null: once bought', example: '2026-06-20T09:00:00.000Z' }),
    mail_state: z.enum(['scheduled', 'sent', 'kept', 'not_sent']).meta({
      description:
        'scheduled until mailed; sent; kept (a sandbox: in its outbox, GET /v1/sandbox_mail); not_sent (never paid, the recipient deleted or erased, the address refused)',
    }),
    mailed_at: z.string().nullable().meta({ description: 'when the mail was sent, kept or given up, ISO 8601' }),
  })
  .meta({ id: 'PurchaseGift', description: 'a gift purchase: its recipient and the mail that tells them' });

/** The purchase, as {@link toPurchase} writes it, with its coupons. */
export const purchaseSchema = z
  .object({
    id: z.string().meta({ description: 'purchase identifier' }),
    purchase_id: z.string().meta({ description: 'the same identifier' }),
    deal_type: z.string().meta({ description: 'type of deal', example: 'daily-deal' }),
    deal_id: z.string(),
    price: z.number().int().meta({ description: 'unit price, cents' }),
    amount: z.number().int().meta({ description: 'total paid, cents' }),
    number_bought: z.number().int(),
    payment_state: z.enum(['pending', 'charged', 'declined', 'failed']),
    fulfillment_state: z.enum(['reserved', 'fulfilled', 'released']),
    created_at: z.string().meta({ description: HUMAN_UTC }),
    user_id: z.string().nullable().meta({ description: 'purchasing user; null on a reservation' }),
    credit_card_id: z.string().nullable().meta({ description: 'card used; null on a reservation and after claim' }),
    deal: purchaseDealSchema,
    coupons: z.array(couponSchema).nullable(),
    amount_refunded: z.number().int().optional().meta({
      description: 'once it has a refund: what its refunds gave back, cents (those that succeeded); payment_state stays `charged`',
    }),
    refunds: z.array(refundSchema).optional().meta({ description: 'once it has a refund: its refunds, oldest first' }),
    gift: giftSchema.optional().meta({ description: 'a gift only: bought for another user, who holds its coupons and is mailed them' }),
  })
  .meta({ id: 'Purchase', description: 'a purchase' });

/** The deal a purchase's example names, in its summary form. */
export const EXAMPLE_PURCHASE_DEAL = {
  id: 'chicago-spa-day',
  deal_id: 'chicago-spa-day',
  title: 'A day at the spa',
  type: 'daily-deal',
  image_url: '/images/deals/chicago-spa-day.jpg',
  image_url_abs: 'https://images.example.com/images/deals/chicago-spa-day.jpg',
};

const examplePurchase = {
  id: 'p7Hc2',
  purchase_id: 'p7Hc2',
  deal_type: 'daily-deal',
  deal_id: 'chicago-spa-day',
  price: 4900,
  amount: 4900,
  number_bought: 1,
  payment_state: 'charged',
  fulfillment_state: 'fulfilled',
  created_at: 'Mon Jun 15 12:00:00 UTC 2026',
  user_id: 'u4Kd8',
  credit_card_id: 'c2Wm5',
  deal: EXAMPLE_PURCHASE_DEAL,
  coupons: [(couponSchema.meta() as { example: unknown }).example],
};

/** `{status, purchase}`: what the purchase calls answer. */
export const PurchaseAnswer = z
  .object({ status: z.literal('success'), purchase: purchaseSchema })
  .meta({ example: { status: 'success', purchase: examplePurchase } });
