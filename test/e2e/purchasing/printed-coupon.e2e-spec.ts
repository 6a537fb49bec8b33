import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ManualClock } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { browserSuite, launchChromium } from '../../support/chromium';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { scanCodes } from '../../support/scan-codes';

/** Screenshots and PDFs for a person to look at (git ignores the folder). */
const OUTPUT = join(__dirname, '..', '..', '..', 'test-output', 'printed-coupon');

/** Pages in a PDF Chromium printed (its page objects, not the page tree's). */
const pagesOf = (pdf: Buffer) => pdf.toString('latin1').match(/\/Type\s*\/Page(?![s\w])/g)?.length ?? 0;

browserSuite('a printed coupon in a browser', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let browser: Browser;
  let apiKey: string;
  let coupons: Array<{ id: string; barcode: string; redemption_code: string; print_url: string }>;

  beforeAll(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([chicago]);
    const riverside = {
      address: { street: '200 River Rd', locality: 'Evanston', region: 'IL', postal_code: '60201', country: 'US' },
      hours: 'Tue-Sun 10-6',
      phone: '(847) 555-0199',
    };
    await api.importDeals([{ ...spaDay, quantity: 5, max_per_user: 5, locations: [...spaDay.locations!, riverside] }]);
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'printer@example.com' } })).body.user_id;
    const reserved = await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: spaDay.id, num_bought: 2 } });
    const claimed = await api.call('PUT', `/purchases/${reserved.body.purchase.id}/claim`, { apiKey, body: { user_id: userId } });
    coupons = claimed.body.purchase.coupons;
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  /** The coupon's print_url opened in a new page; what the browser refused or complained of is collected. */
  async function opened(printUrl: string): Promise<{ page: Page; complaints: string[] }> {
    const page = await browser.newPage({ ignoreHTTPSErrors: true, viewport: { width: 900, height: 1200 }, deviceScaleFactor: 2 });
    const complaints: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') complaints.push(message.text());
    });
    page.on('requestfailed', (request) => complaints.push(`failed: ${request.url()}`));
    const link = new URL(printUrl);
    const response = await page.goto(`${api.url}${link.pathname}${link.search}`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toMatch(/^default-src 'none'; img-src data:; style-src 'sha256-[\w+/=]+';/);
    expect(response?.headers()['content-security-policy']).not.toMatch(/unsafe|script-src/);
    return { page, complaints };
  }

  // A page scanned in a process of its own and printed twice: a ceiling above the scan's own (scanCodes).
  it('prints a valid coupon on one page whose QR code and barcode scan to its codes', async () => {
    const [coupon] = coupons;
    const { page, complaints } = await opened(coupon.print_url);
    const text = await page.innerText('main');
    for (const expected of [
      'Spa day for two',
      'At Calm Spa',
      'Valid until Thu, Dec 31, 2026, 5:59 PM CST',
      '1 Lake St\nChicago, IL 60601\nUS',
      'Phone: (312) 555-0100',
      'Hours: 9-5',
      '200 River Rd\nEvanston, IL 60201\nUS',
      'Phone: (847) 555-0199',
      'Hours: Tue-Sun 10-6',
      'Print the coupon.',
      'Limit 2 per person.',
      'Void where prohibited.',
    ])
      expect(text).toContain(expected);
    // The strict policy refused nothing the page uses (a refused style or image is reported here).
    expect(complaints).toEqual([]);
    const screenshot = join(OUTPUT, 'valid.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(await scanCodes(screenshot)).toEqual({ qr: coupon.redemption_code, barcode: coupon.barcode });
    for (const format of ['A4', 'Letter'] as const) {
      const pdf = await page.pdf({ format });
      writeFileSync(join(OUTPUT, `valid-${format.toLowerCase()}.pdf`), pdf);
      expect([format, pagesOf(pdf)]).toEqual([format, 1]);
    }
    if (process.env.PRINTED_COUPON_SCREENSHOT) {
      mkdirSync(dirname(process.env.PRINTED_COUPON_SCREENSHOT), { recursive: true });
      await page.setViewportSize({ width: 820, height: 900 });
      writeFileSync(process.env.PRINTED_COUPON_SCREENSHOT, await page.screenshot({ fullPage: true, scale: 'css' }));
    }
    await page.close();
  }, 120_000);

  // Two pages, each scanned in a process of its own: a ceiling above both scans' own (scanCodes).
  it('shows a redeemed or expired coupon as not valid, with nothing to scan or key in', async () => {
    const [redeemed, expiring] = coupons;
    expect((await api.call('PUT', `/coupons/${redeemed.id}/redeem`, { apiKey })).status).toBe(200);
    clock.set('2027-01-01T06:00:00Z');
    for (const [coupon, state, when] of [
      [redeemed, 'redeemed', 'Redeemed Mon, Jun 15, 2026, 7:00 AM CDT'],
      [expiring, 'expired', 'Expired Thu, Dec 31, 2026, 5:59 PM CST'],
    ] as const) {
      const { page, complaints } = await opened(coupon.print_url);
      const screenshot = join(OUTPUT, `${state}.png`);
      await page.screenshot({ path: screenshot, fullPage: true });
      expect(await scanCodes(screenshot)).toEqual({ qr: null, barcode: null });
      expect(await page.innerText('.void')).toMatch(new RegExp(`^not valid: ${state}`, 'i'));
      expect(await page.innerText('main')).toContain(when);
      expect(await page.locator('img').count()).toBe(0);
      const html = await page.content();
      for (const code of [coupon.redemption_code, coupon.barcode]) expect(html).not.toContain(code);
      const pdf = await page.pdf({ format: 'Letter' });
      writeFileSync(join(OUTPUT, `${state}.pdf`), pdf);
      expect(pagesOf(pdf)).toBe(1);
      expect(complaints).toEqual([]);
      await page.close();
    }
  }, 180_000);
});
