import { ManualClock, OPERATOR } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { CommandBus } from '@nestjs/cqrs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { browserSuite, launchChromium } from '../../support/chromium';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { totpAt } from '../../support/site-client';

/** Screenshots of each page, for a person to look at (ignored by git). */
const SHOTS = join(__dirname, '..', '..', '..', 'test-output', 'partner-site');
const PASSWORD = 'a long and private passphrase';

browserSuite('The partner site in a browser', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let browser: Browser;
  /** What the browser reported that a page should never cause: refused resources, CSP violations, errors. */
  const problems: string[] = [];

  const watch = (page: Page) => {
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
    // (A page answered 404 on purpose is logged as a failed resource: not a problem.)
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 404/.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`error: ${error.message}`));
    return page;
  };
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const invite = async (partnerId: string, email: string) => {
    const { token } = await api.get(CommandBus).execute(new InviteMember(partnerId, email, OPERATOR));
    await api.settle();
    return `${api.url}/partner/sign-up?token=${token}`;
  };
  const signUpAndIn = async (page: Page, link: string, email: string) => {
    await page.goto(link);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('The same password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL(/\/partner\/sign-in\?signed-up=1$/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/partner\/keys$/);
  };
  const apiStatus = async (apiKey: string) => (await api.call('GET', '/v1/deals', { apiKey })).status;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    api = await TestApi.start({ clock });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('invite, sign up, sign in with TOTP, rotate a key (both work), revoke it (401), a forged post refused, another partner not found', async () => {
    const partner = await api.createPartner('Acme Travel');
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1200, height: 800 } });
    const page = watch(await context.newPage());

    const link = await invite(partner.partnerId, 'ada@acme.example');
    await page.goto(link);
    await shot(page, 'sign-up');
    await signUpAndIn(page, link, 'ada@acme.example');

    await page.getByRole('link', { name: 'Sign-in and security' }).click();
    await page.getByRole('button', { name: 'Set up two-step sign-in' }).click();
    const secret = (await page.locator('figcaption code').textContent())!;
    await shot(page, 'totp-set-up');
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByLabel('Code from your app').fill(await totpAt(secret, clock.now()));
    await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
    await page.waitForURL(/\/partner\/security\?done=totp$/);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(/\/partner\/sign-in$/);
    clock.advance(30_000);
    await page.getByLabel('Email').fill('ada@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel(/Code from your authenticator app/).fill(await totpAt(secret, clock.now()));
    await shot(page, 'sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/partner\/keys$/);

    // A second key, then the first rotated with a day's grace: the new key and the old both work.
    await page.getByLabel('Name', { exact: true }).fill('reporting');
    await page.getByRole('button', { name: 'Issue a key' }).click();
    await expect(page.locator('#api-key').textContent()).resolves.toMatch(/^dk_/);
    await page.getByRole('link', { name: 'Back to your keys' }).click();
    const firstRow = page.locator('tbody tr').first();
    await firstRow.getByRole('button', { name: 'Rotate' }).click();
    const newKey = (await page.locator('#api-key').textContent())!;
    await shot(page, 'key-rotated');
    expect(await apiStatus(newKey)).toBe(200);
    expect(await apiStatus(partner.apiKey)).toBe(200);
    await page.getByRole('link', { name: 'Back to your keys' }).click();
    await shot(page, 'keys');

    // The new key revoked: the API refuses it.
    const newRow = page.locator('tbody tr', { hasText: newKey.slice(0, 10) });
    await newRow.getByRole('button', { name: /^Revoke/ }).click();
    await page.waitForURL(/\/partner\/keys$/);
    await expect(newRow.textContent()).resolves.toContain('revoked');
    expect(await apiStatus(newKey)).toBe(401);

    // A form posted with the session's cookie but without the page's token: refused.
    const forged = await page.request.post(`${api.url}/partner/keys`, { form: { name: 'forged' } });
    expect(forged.status()).toBe(403);
    await page.goto(`${api.url}/partner/keys`);
    expect(await page.content()).not.toContain('forged');

    await page.getByRole('link', { name: 'v3 password' }).click();
    await shot(page, 'password');
    await page.getByRole('link', { name: 'Usage' }).click();
    await shot(page, 'usage');
    await page.getByRole('link', { name: 'Email batches' }).click();
    await shot(page, 'batches');

    // A purchase of this partner is found; another partner's person finds nothing of it.
    await api.importRegions([chicago]);
    await api.importDeals([spaDay]);
    const userId = (await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email: 'buyer@example.com' } })).body.user_id;
    const purchaseId = (
      await api.call('POST', '/purchases/reserve', { apiKey: partner.apiKey, body: { deal_id: spaDay.id, num_bought: 1 } })
    ).body.purchase.id;
    const claimed = await api.call('PUT', `/purchases/${purchaseId}/claim`, { apiKey: partner.apiKey, body: { user_id: userId } });
    const couponId = claimed.body.purchase.coupons[0].id;
    await api.settle();
    await page.getByRole('link', { name: 'Look-up' }).click();
    await page.getByLabel(/Purchase id, coupon id/).fill('buyer@example.com');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect(page.locator('main').textContent()).resolves.toContain(purchaseId);
    await shot(page, 'lookup');

    const rival = await api.createPartner('Rival Tours');
    const other = watch(await (await browser.newContext({ ignoreHTTPSErrors: true })).newPage());
    await signUpAndIn(other, await invite(rival.partnerId, 'bo@rival.example'), 'bo@rival.example');
    for (const q of [purchaseId, couponId, 'buyer@example.com']) {
      const answer = await other.goto(`${api.url}/partner/lookup?q=${encodeURIComponent(q)}`);
      expect(answer!.status()).toBe(404);
      await expect(other.locator('main .not-found').textContent()).resolves.toContain('Not found');
    }
    await shot(other, 'lookup-not-found');
    expect(problems).toEqual([]);
  }, 120_000);
});
