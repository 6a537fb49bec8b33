import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CatalogLinks } from '@deals/catalog';
import { humanUtc } from '@deals/wire';
import { couponState } from '../domain/coupon/coupon.decider';
import type { CouponDetails } from '../projections/coupon-details/coupon-details.projection';
import type { PurchaseDetails } from '../projections/purchase-details/purchase-details.projection';

export abstract class CouponLinks {
  /** This API's address, where coupons' QR images and printable pages are served. */
  abstract readonly apiBaseUrl: string;
  /** The key a coupon's public links carry: only who was given the link can open it. */
  abstract keyOf(couponId: string): string;
  /** Whether `key` is the coupon's link key (compared in constant time). */
  abstract opens(couponId: string, key: unknown): boolean;
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

  opens(couponId: string, key: unknown): boolean {
    if (typeof key !== 'string') return false;
    const expected = Buffer.from(this.keyOf(couponId));
    const given = Buffer.from(key);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** Part 2.6, with both names the interface gives for the QR image and data. */
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

/** Part 2.5. `amount` is the purchase total (unit price × number bought) in cents. */
export function toPurchase(purchase: PurchaseDetails, coupons: unknown[] | null, catalog: CatalogLinks) {
  const image = purchase.deal.imageUrl ?? `/images/deals/${purchase.deal.dealId}.jpg`;
  return {
    id: purchase._id,
    purchase_id: purchase._id,
    deal_type: purchase.deal.type,
    deal_id: purchase.deal.dealId,
    price: purchase.deal.unitPrice,
    amount: purchase.amountCents,
    number_bought: purchase.quantity,
    payment_state: purchase.paymentState,
    fulfillment_state: purchase.fulfillmentState,
    created_at: humanUtc(purchase.createdAt),
    // A card purchase still being charged (or settled later) names its buyer and card already.
    user_id: purchase.userId ?? purchase.paymentIntent?.userId ?? null,
    credit_card_id: purchase.creditCardId ?? purchase.paymentIntent?.creditCardId ?? null,
    deal: {
      id: purchase.deal.dealId,
      deal_id: purchase.deal.dealId,
      title: purchase.deal.title,
      type: purchase.deal.type,
      image_url: image,
      image_url_abs: `${catalog.imageBaseUrl}${image}`,
    },
    coupons,
  };
}
