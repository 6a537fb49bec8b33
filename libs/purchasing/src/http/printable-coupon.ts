import { humanUtc } from '@deals/wire';
import { couponState } from '../domain/coupon/coupon.decider';
import type { CouponDetails } from '../projections/coupon-details/coupon-details.projection';

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The printable coupon page: deal, state, codes and the QR image, on one page. */
export function printableCoupon(coupon: CouponDetails, title: string, qrBase64: string, now: number): string {
  const expires = coupon.expiresAt === null ? 'does not expire' : `expires ${humanUtc(new Date(coupon.expiresAt))}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Coupon ${escape(coupon._id)}</title>
<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}figure{margin:1em 0}code{font-size:1.4em}@media print{button{display:none}}</style>
</head><body>
<h1>${escape(title)}</h1>
<p>Coupon <code>${escape(coupon._id)}</code>: ${escape(couponState(coupon, now))}, ${escape(expires)}.</p>
<figure><img alt="QR code of the redemption code" src="data:image/png;base64,${qrBase64}" width="240" height="240"></figure>
<p>Redemption code: <code>${escape(coupon.redemptionCode)}</code></p>
<p>Barcode: <code>${escape(coupon.barcode)}</code></p>
<button onclick="print()">Print</button>
</body></html>
`;
}
