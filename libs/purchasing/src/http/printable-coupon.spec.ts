import { createHash } from 'node:crypto';
import type { CouponDetails } from '../projections/coupon-details/coupon-details.projection';
import { barcodeSvg } from '../coupon-images/coupon-barcode';
import { CouponImages, localTime, printableCoupon, PrintableCouponPage, PRINTABLE_PAGE_POLICY } from './printable-coupon';

const now = Date.parse('2026-06-15T12:00:00Z');
const coupon: CouponDetails = {
  _id: 'P7-1',
  _pos: '00000000000000000001',
  partnerId: 'partner',
  userId: 'user',
  purchaseId: 'P7',
  number: 1,
  dealId: 'spa',
  dealType: 'daily-deal',
  barcode: '4006381333931',
  redemptionCode: 'K7QX2M9PWD',
  expiresAt: Date.parse('2026-12-31T23:59:00Z'),
  issuedAt: '2026-06-15T12:00:00.000Z',
  redeemedAt: null,
  cancelledAt: null,
};
const page: PrintableCouponPage = {
  coupon,
  title: 'Spa day for two',
  terms: {
    merchant: 'Calm Spa',
    instructions: 'Print the coupon.',
    finePrint: 'Limit 2 per person.',
    legalese: 'Void where prohibited.',
    locations: [
      {
        address: { street: '1 Lake St', locality: 'Chicago', region: 'IL', postal_code: '60601', country: 'US' },
        phone: '(312) 555-0100',
        hours: '9-5',
      },
      { address: { street: '2 River Rd', locality: 'Evanston', region: 'IL' }, hours: '' },
    ],
  },
  timeZone: 'America/Chicago',
  now,
};
const images: CouponImages = { qrPngBase64: 'iVBORw0KGgo', barcodeSvg: barcodeSvg(coupon.barcode) };

describe('printableCoupon', () => {
  it("shows the expiry in the deal region's time, with its zone", () => {
    const html = printableCoupon(page, images);
    expect(html).toContain('Valid until Thu, Dec 31, 2026, 5:59 PM CST');
    expect(printableCoupon({ ...page, timeZone: 'Pacific/Honolulu' }, images)).toContain('Valid until Thu, Dec 31, 2026, 1:59 PM HST');
    expect(printableCoupon({ ...page, coupon: { ...coupon, expiresAt: null } }, images)).toContain('Does not expire');
    expect(localTime('2026-07-04T15:30:00Z', 'America/Chicago')).toBe('Sat, Jul 4, 2026, 10:30 AM CDT');
  });

  it('shows the merchant, every location, the instructions and the terms', () => {
    const html = printableCoupon(page, images);
    for (const text of [
      'At Calm Spa',
      '<address>1 Lake St<br>Chicago, IL 60601<br>US</address>',
      'Phone: (312) 555-0100',
      'Hours: 9-5',
      '<address>2 River Rd<br>Evanston, IL</address>',
      'Print the coupon.',
      'Limit 2 per person.',
      'Void where prohibited.',
    ])
      expect(html).toContain(text);
    expect(html.match(/<li>/g)).toHaveLength(2);
  });

  it("shows a valid coupon's QR image, barcode image and both codes", () => {
    const html = printableCoupon(page, images);
    expect(html).toContain('src="data:image/png;base64,iVBORw0KGgo"');
    expect(html).toContain(`src="data:image/svg+xml;base64,${Buffer.from(images.barcodeSvg!).toString('base64')}"`);
    expect(html).toContain(coupon.redemptionCode);
    expect(html).toContain(coupon.barcode);
    expect(html).not.toContain('Not valid');
  });

  it.each([
    ['redeemed', { redeemedAt: '2026-06-15T14:00:00.000Z' }, 'Redeemed Mon, Jun 15, 2026, 9:00 AM CDT'],
    ['cancelled', { cancelledAt: '2026-06-15T14:00:00.000Z' }, 'Cancelled Mon, Jun 15, 2026, 9:00 AM CDT'],
    ['expired', { expiresAt: Date.parse('2026-06-01T04:59:00Z') }, 'Expired Sun, May 31, 2026, 11:59 PM CDT'],
  ])('says a %s coupon is not valid across the page, and shows no code at all', (state, change, when) => {
    const html = printableCoupon({ ...page, coupon: { ...coupon, ...change } }, images);
    expect(html).toContain(`<p class="void" role="alert">Not valid: ${state}`);
    expect(html).toContain(`<div class="watermark" aria-hidden="true">${state}</div>`);
    expect(html).toContain(when);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('data:');
    for (const code of [coupon.redemptionCode, coupon.barcode, coupon._id]) expect(html).not.toContain(code);
    expect(html).toContain('At Calm Spa');
  });

  it('escapes every text it shows', () => {
    const hostile = '<script>alert("x")</script>&\'';
    const html = printableCoupon(
      {
        ...page,
        title: hostile,
        terms: {
          merchant: hostile,
          instructions: hostile,
          finePrint: hostile,
          legalese: hostile,
          locations: [{ address: { street: hostile }, phone: hostile, hours: hostile }],
        },
      },
      images,
    );
    expect(html).not.toContain('<script');
    expect(html).not.toContain('"x"');
    expect(html.match(/&#60;script&#62;alert\(&#34;x&#34;\)&#60;\/script&#62;&#38;&#39;/g)).toHaveLength(9); // title (twice), merchant, three terms, street, phone, hours
  });

  it('allows its style sheet by hash, and no script', () => {
    const html = printableCoupon(page, images);
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1];
    const hash = createHash('sha256').update(style).digest('base64');
    expect(PRINTABLE_PAGE_POLICY).toBe(
      `default-src 'none'; img-src data:; style-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    expect(html).not.toMatch(/<script|\son[a-z]+=|style="/i);
  });
});
