import type { DealTerms } from '@deals/catalog';
import { humanUtc } from '@deals/wire';
import { couponState } from '../domain/coupon/coupon.decider';
import type { CouponDetails } from '../projections/coupon-details/coupon-details.projection';

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * What the page may load and do: its own inline style and print button, its QR image (a data
 * address), nothing from elsewhere, no forms, no framing by another site.
 */
export const PRINTABLE_PAGE_POLICY =
  "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The deal's terms a holder needs at the merchant's counter (part 2.1), as the page shows them. */
export interface CouponTerms {
  merchant?: string;
  instructions?: string;
  finePrint?: string;
  /** Part 2.1: only for printed deals. */
  legalese?: string;
}

export function couponTerms(deal: DealTerms): CouponTerms {
  return {
    merchant: deal.merchant_name,
    instructions: deal.instructions,
    finePrint: deal.fine_print,
    legalese: deal.fulfillment_method === 'printed' ? deal.fine_print_legalese : undefined,
  };
}

const section = (heading: string, text: string | undefined) => (text ? `<h2>${heading}</h2>\n<p>${escape(text)}</p>\n` : '');

/** The printable coupon page: deal, merchant, state, codes, the QR image and the deal's terms, on one page. */
export function printableCoupon(coupon: CouponDetails, title: string, terms: CouponTerms, qrBase64: string, now: number): string {
  const expires = coupon.expiresAt === null ? 'does not expire' : `expires ${humanUtc(new Date(coupon.expiresAt))}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Coupon ${escape(coupon._id)}</title>
<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}figure{margin:1em 0}code{font-size:1.4em}h2{font-size:1em;margin-bottom:0}@media print{button{display:none}}</style>
</head><body>
<h1>${escape(title)}</h1>
${terms.merchant ? `<p>At ${escape(terms.merchant)}</p>\n` : ''}<p>Coupon <code>${escape(coupon._id)}</code>: ${escape(couponState(coupon, now))}, ${escape(expires)}.</p>
<figure><img alt="QR code of the redemption code" src="data:image/png;base64,${qrBase64}" width="240" height="240"></figure>
<p>Redemption code: <code>${escape(coupon.redemptionCode)}</code></p>
<p>Barcode: <code>${escape(coupon.barcode)}</code></p>
${section('How to use it', terms.instructions)}${section('Fine print', terms.finePrint)}${section('Terms', terms.legalese)}<button onclick="print()">Print</button>
</body></html>
`;
}
