import { HistorySealing } from '@deals/runtime';
import { ManualClock } from '@deals/kernel';
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { TestApi } from '../../support/api-harness';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { browserSuite, launchChromium } from '../../support/chromium';
import { tempDir } from '../../support/temp-dir';

/** Screenshots of each page, for a person to look at (ignored by git). */
const SHOTS = join(__dirname, '..', '..', '..', 'test-output', 'audit-pages');

/**
 * The auditor's pages in Debian's Chromium: an auditor signs in with the browser's own prompt (its
 * username and password) and sees a purchase's every event and "Verified"; after a row of the log is
 * edited with SQL behind the service's back, the page names the event that fails; `as_of` shows the
 * history as it stood; a partner's credentials see no auditor page; the pages run no script and
 * load nothing.
 */
browserSuite('The auditor’s pages in a browser', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const dir = tempDir('audit-pages');
  let api: TestApi;
  let browser: Browser;
  let auditor: { username: string; password: string; apiKey: string };
  let partner: { username: string; password: string; apiKey: string };
  let purchaseId: string;
  let cardLinkId: string;
  const problems: string[] = [];

  const pageAs = async (who: { username: string; password: string }) => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, httpCredentials: who, viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 40[34]/.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`error: ${error.message}`));
    return page;
  };
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    api = await TestApi.start({ clock, dataDir: dir.path });
    partner = await api.createPartner('Seller');
    auditor = await api.createPartner('Audit office', 'auditor');
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, quantity: 20, max_per_user: undefined }, cardLinked]);
    const userId = (await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email: 'audited@example.com' } })).body.user_id;
    const reserved = await api.call('POST', '/purchases/reserve', { apiKey: partner.apiKey, body: { deal_id: spaDay.id, num_bought: 1 } });
    purchaseId = reserved.body.purchase.id;
    clock.advance(60_000);
    await api.call('PUT', `/purchases/${purchaseId}/claim`, { apiKey: partner.apiKey, body: { user_id: userId } });
    cardLinkId = (await api.call('POST', '/card_links', { apiKey: partner.apiKey, body: { user_id: userId, deal_id: cardLinked.id } })).body
      .card_link.id;
    await api.settle();
    await api.get(HistorySealing).sealNow();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.stop();
    dir.remove();
  });

  it('shows an auditor a purchase’s every event, verified, and the history as of an instant', async () => {
    const page = await pageAs(auditor);
    const answer = await page.goto(`${api.url}/audit/pages/purchases/${purchaseId}`);
    expect(answer!.status()).toBe(200);
    expect(answer!.headers()['content-security-policy']).toMatch(/default-src 'none'/);
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Verified: \d+ sealed events of purchase-/);
    const rows = page.locator('tbody tr');
    // The reservation and its hold are one write, the deal's inventory first.
    await expect(rows.locator('.type').allTextContents()).resolves.toEqual([
      'UnitsHeld',
      'PurchaseReserved',
      'UnitsSold',
      'PurchaseClaimed',
      'CouponIssued',
    ]);
    await expect(rows.filter({ hasText: 'PurchaseClaimed' }).locator('td:last-child').textContent()).resolves.toBe('verified');
    await shot(page, 'purchase-verified');

    // As it stood before the claim: the reservation alone.
    await page.getByLabel('As of (ISO 8601 instant)').fill('2026-06-15T12:00:30Z');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/as_of=2026-06-15T12%3A00%3A30Z/);
    await expect(page.locator('tbody tr').filter({ hasText: 'PurchaseClaimed' }).count()).resolves.toBe(0);
    await expect(page.locator('main').textContent()).resolves.toMatch(/As of 2026-06-15T12:00:30.000Z: reserved/);

    const link = await page.goto(`${api.url}/audit/pages/card_links/${cardLinkId}`);
    expect(link!.status()).toBe(200);
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Verified/);
    await shot(page, 'card-link');
    expect(problems).toEqual([]);
  });

  it('names the event whose row was edited with SQL behind the service’s back', async () => {
    const db = new Database(join(dir.path, 'events.sqlite'));
    try {
      const row = db.prepare('SELECT position, data FROM events WHERE stream_id = ? AND revision = 1').get(`purchase-${purchaseId}`) as {
        position: number;
        data: string;
      };
      db.prepare('UPDATE events SET data = ? WHERE position = ?').run(
        row.data.replace(/"amountCents":\d+/, '"amountCents":1'),
        row.position,
      );
      // The running service reads the file again (its own appends' copies are only for what it wrote since).
      await api.stop();
      api = await TestApi.start({ clock, dataDir: dir.path });
      const page = await pageAs(auditor);
      await page.goto(`${api.url}/audit/pages/purchases/${purchaseId}`);
      const alert = await page.getByRole('alert').textContent();
      expect(alert).toContain(
        `Not verified (the whole stream, now): the event at position ${String(row.position).padStart(20, '0')} (PurchaseClaimed, revision 1)`,
      );
      expect(alert).toContain('its content was changed since it was sealed');
      await expect(page.locator('tbody tr').filter({ hasText: 'PurchaseClaimed' }).locator('td.fails').textContent()).resolves.toMatch(
        /^does not match/,
      );
      await shot(page, 'purchase-tampered');

      // Its first event deleted: the history no longer reads, and the page still says what is wrong.
      db.prepare('DELETE FROM events WHERE stream_id = ? AND revision = 0').run(`purchase-${purchaseId}`);
      await api.stop();
      api = await TestApi.start({ clock, dataDir: dir.path });
      const cut = await pageAs(auditor);
      const answer = await cut.goto(`${api.url}/audit/pages/purchases/${purchaseId}?as_of=`);
      expect(answer!.status()).toBe(200);
      await expect(cut.getByRole('alert').textContent()).resolves.toMatch(
        /revision 1\) does not match: the stream's revision 0 is missing/,
      );
    } finally {
      db.close();
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows a partner no auditor page, and asks a browser with no credentials for them', async () => {
    const page = await pageAs(partner);
    const refused = await page.goto(`${api.url}/audit/pages/purchases/${purchaseId}`);
    expect(refused!.status()).toBe(403);
    await expect(page.locator('body').textContent()).resolves.not.toContain('PurchaseReserved');
    const byKey = await api.call('GET', `/audit/pages/purchases/${purchaseId}`, { apiKey: partner.apiKey });
    expect(byKey.status).toBe(403);
    const anonymous = await api.call('GET', `/audit/pages/purchases/${purchaseId}`);
    expect([anonymous.status, anonymous.headers['www-authenticate']]).toEqual([401, expect.stringMatching(/^Basic/)]);
  });
});
