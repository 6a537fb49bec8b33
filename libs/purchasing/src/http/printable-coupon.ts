import type { DealLocation, DealTerms } from '@deals/catalog';
import { couponState } from '../domain/coupon/coupon.decider';
import type { CouponDetails } from '../projections/coupon-details/coupon-details.projection';
import { PRINTABLE_PAGE_STYLE } from './printable-coupon.style';

export { PRINTABLE_PAGE_POLICY } from './printable-coupon.style';

/** Every text the page shows comes from a partner's catalogue or a coupon: escaped for text and attributes alike. */
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The deal's terms a holder needs at the merchant's counter, as the page shows them. */
export interface CouponTerms {
  merchant?: string;
  instructions?: string;
  finePrint?: string;
  /** Only for printed deals. */
  legalese?: string;
  locations: DealLocation[];
}

export function couponTerms(deal: DealTerms): CouponTerms {
  return {
    merchant: deal.merchant_name,
    instructions: deal.instructions,
    finePrint: deal.fine_print,
    legalese: deal.fulfillment_method === 'printed' ? deal.fine_print_legalese : undefined,
    locations: Array.isArray(deal.locations) ? deal.locations : [],
  };
}

/** What the page shows of a coupon, at `now`. */
export interface PrintableCouponPage {
  coupon: CouponDetails;
  title: string;
  terms: CouponTerms;
  /** The IANA zone of the deal's region: the coupon's times are shown in it (as the deal's `expires_at`). */
  timeZone: string;
  now: number;
}

/** A valid coupon's codes as images: the QR image of its redemption code (PNG) and its barcode (SVG, when drawn). */
export interface CouponImages {
  qrPngBase64: string;
  barcodeSvg: string | null;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** `Thu, Dec 31, 2026, 5:59 PM CST`: the wall clock in `timeZone`, with the zone's name then. */
export function localTime(at: Date | string | number, timeZone: string): string {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZoneName: 'short',
    });
    formats.set(timeZone, format);
  }
  const p = Object.fromEntries(format.formatToParts(new Date(at)).map((part) => [part.type, part.value]));
  return `${p.weekday}, ${p.month} ${p.day}, ${p.year}, ${p.hour}:${p.minute} ${p.dayPeriod} ${p.timeZoneName}`;
}

const VOID_REASONS: Record<string, string> = {
  redeemed: 'This coupon has been redeemed and cannot be used again.',
  expired: 'This coupon has expired.',
  cancelled: 'This coupon has been cancelled.',
};

/** Any value a catalogue's location holds, as text (locations are stored as imported). */
const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '');

function locationItem(location: DealLocation): string {
  const address = location?.address ?? {};
  const town = [text(address.locality), [text(address.region), text(address.postal_code)].filter(Boolean).join(' ')].filter(Boolean);
  const lines = [text(address.street), town.join(', '), text(address.country)].filter(Boolean).map(escape);
  const phone = text(location?.phone);
  const hours = text(location?.hours);
  return `<li>${lines.length ? `<address>${lines.join('<br>')}</address>` : ''}${phone ? `<p>Phone: ${escape(phone)}</p>` : ''}${
    hours ? `<p>Hours: ${escape(hours)}</p>` : ''
  }</li>`;
}

const section = (heading: string, body: string | undefined, kind = 'text') =>
  body ? `<section><h2>${heading}</h2><p class="${kind}">${escape(body)}</p></section>\n` : '';

/** When the coupon stops, or stopped, being valid, in the region's time. */
function when({ coupon, timeZone }: PrintableCouponPage, state: string): string {
  const at = (instant: string | number | null) => (instant === null ? '' : ` ${localTime(instant, timeZone)}`);
  if (state === 'redeemed') return `Redeemed${at(coupon.redeemedAt)}`;
  if (state === 'cancelled') return `Cancelled${at(coupon.cancelledAt)}`;
  if (coupon.expiresAt === null) return 'Does not expire';
  return `${state === 'expired' ? 'Expired' : 'Valid until'}${at(coupon.expiresAt)}`;
}

function codes(coupon: CouponDetails, images: CouponImages): string {
  const barcode = images.barcodeSvg
    ? `<img class="barcode" alt="Barcode ${escape(coupon.barcode)}" src="data:image/svg+xml;base64,${Buffer.from(images.barcodeSvg).toString('base64')}">`
    : `<span class="code">${escape(coupon.barcode)}</span>`;
  return `<section class="codes" aria-label="Codes to scan">
<figure><img class="qr" alt="QR code of the redemption code" src="data:image/png;base64,${images.qrPngBase64}"><figcaption>Redemption code <span class="code">${escape(coupon.redemptionCode)}</span></figcaption></figure>
<figure>${barcode}<figcaption>Barcode</figcaption></figure>
</section>
`;
}

/**
 * The printable coupon page: deal, merchant and its locations, the codes (QR image and barcode)
 * and when they stop being valid, instructions and terms, on one printed page. A coupon that is not
 * valid at `now` says so across the page and shows no code at all, as image or text: nothing on it
 * can be scanned or keyed in. No script: a holder prints with the browser's own command.
 */
export function printableCoupon(page: PrintableCouponPage, images: CouponImages | null): string {
  const { coupon, title, terms } = page;
  const state = couponState(coupon, page.now);
  const valid = state === 'valid';
  const locations = terms.locations.filter((location) => location && typeof location === 'object');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${valid ? 'Coupon' : 'Not valid'}: ${escape(title)}</title>
<style>${PRINTABLE_PAGE_STYLE}</style>
</head><body>
<main>
${
  valid
    ? ''
    : `<div class="watermark" aria-hidden="true">${escape(state)}</div>
<p class="void" role="alert">Not valid: ${escape(state)}<small>${VOID_REASONS[state] ?? 'This coupon cannot be used.'}</small></p>
`
}<h1>${escape(title)}</h1>
${terms.merchant ? `<p class="merchant">At ${escape(terms.merchant)}</p>\n` : ''}<p class="when">${escape(when(page, state))}</p>
${valid && images ? codes(coupon, images) : ''}${
    locations.length
      ? `<section><h2>Where to use it</h2><ul class="locations">${locations.map(locationItem).join('')}</ul></section>\n`
      : ''
  }${section('How to use it', terms.instructions)}${section('Fine print', terms.finePrint, 'text fine')}${section('Terms', terms.legalese, 'text fine')}${
    valid ? `<p class="ref">Coupon ${escape(coupon._id)}</p>\n` : ''
  }<p class="hint">To print this coupon, use your browser's Print command.</p>
</main>
</body></html>
`;
}
