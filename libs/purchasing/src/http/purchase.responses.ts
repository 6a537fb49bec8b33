import type { CatalogLinks } from '@deals/catalog';
import { humanUtc } from '@deals/wire';
import { couponState } from '../domain/coupon/coupon.decider';
import type { CouponDetails } from '../projections/coupon-details/coupon-details.projection';
import type { PurchaseDetails } from '../projections/purchase-details/purchase-details.projection';

export abstract class CouponLinks {
  /** This API's address, where coupons' QR images and printable pages are served. */
  abstract readonly apiBaseUrl: string;
}

/** Part 2.6, with both names the interface gives for the QR image and data. */
export function toCoupon(coupon: CouponDetails, now: number, links: CouponLinks, qrBase64: string | null, withPrintUrl = true) {
  const qrUrl = `${links.apiBaseUrl}/coupons/${coupon._id}/qr.png`;
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
    ...(withPrintUrl ? { print_url: `${links.apiBaseUrl}/coupons/${coupon._id}/print` } : {}),
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
    deal: { id: purchase.deal.dealId, deal_id: purchase.deal.dealId, title: purchase.deal.title, type: purchase.deal.type, image_url: image, image_url_abs: `${catalog.imageBaseUrl}${image}` },
    coupons,
  };
}
