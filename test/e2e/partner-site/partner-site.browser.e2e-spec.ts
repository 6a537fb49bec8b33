import { ManualClock, OPERATOR } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { CommandBus } from '@nestjs/cqrs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { browserSuite, launchChromium } from '../../support/chromium';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { totpAt } from '../../support/site-client';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { WebhookSender } from '@deals/event-feed';

/** Screenshots of each page, for a person to look at (ignored by git). */
const SHOTS = join(__dirname, '..', '..', '..', 'test-output', 'partner-site');
const PASSWORD = 'a long and private passphrase';

browserSuite('The partner site in a browser', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let browser: Browser;
  let receiver: WebhookReceiver;
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
  /** The text of `locator` once the page is loaded again (what the jobs recorded after an answer shows on a new load). */
  const reloadedText = async (page: Page, locator: Locator) => {
    await page.reload();
    return (await locator.textContent()) ?? '';
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    receiver = await WebhookReceiver.start();
    api = await TestApi.start({ clock, env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'on', WEBHOOK_RETRY_DELAYS_MS: '200,200,200' } });
    // The receiver's certificate trusted by the sender in this process (a child process would take NODE_EXTRA_CA_CERTS).
    (api.get(WebhookSender) as unknown as { agent: { options: { ca?: string } } }).agent.options.ca = receiver.ca;
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await receiver?.close();
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

    // The buyer's personal data erased from the Personal data page, then the erasure acknowledged.
    await page.getByRole('link', { name: 'Personal data' }).click();
    await page.getByLabel('User id').fill(userId);
    await page.getByLabel('I understand this cannot be undone').check();
    await page.getByRole('button', { name: 'Erase', exact: true }).click();
    await page.waitForURL(/\/partner\/erasures\?done=erased$/);
    await expect(page.getByRole('status').first().textContent()).resolves.toMatch(/personal data is erased/);
    await shot(page, 'erasures');
    await page.getByRole('button', { name: `Acknowledge the erasure of ${userId}` }).click();
    await page.waitForURL(/\/partner\/erasures\?done=acknowledged$/);
    await expect(page.locator('main').textContent()).resolves.toContain('None: every erasure is acknowledged.');

    // The claimed reservation is on today's statement, under its chart; the settings page sets the rollback window.
    await page.getByRole('link', { name: 'Statements' }).click();
    await expect(page.getByRole('img').first().getAttribute('aria-labelledby')).resolves.toBe('chart-desc');
    await shot(page, 'statements');
    const today = clock.now().toISOString().slice(0, 10);
    await page.getByRole('link', { name: today }).click();
    await expect(page.locator('main').textContent()).resolves.toContain(purchaseId);
    await shot(page, 'statement');
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel(/Hours after a redemption/).fill('48');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/\/partner\/settings\?saved=1$/);
    await expect(page.locator('main').textContent()).resolves.toContain('Now: 48 hours.');
    await shot(page, 'settings');

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

  it('webhooks: register an endpoint (its secret once), see its deliveries and each attempt, send an event again, disable it; the events', async () => {
    const partner = await api.createPartner('Acme Hooks');
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1200, height: 800 } });
    const page = watch(await context.newPage());
    await signUpAndIn(page, await invite(partner.partnerId, 'hooks@acme.example'), 'hooks@acme.example');
    // The receiver: the first request to /orders fails (500), every later one succeeds; /legacy is gone (410).
    const ordersSoFar = () => receiver.received.filter((r) => r.path === '/orders').length;
    receiver.answerBy((r) =>
      r.path === '/legacy'
        ? { status: 410, body: 'this endpoint was retired' }
        : ordersSoFar() === 1
          ? { status: 500, body: '{"error":"database busy, try again"}', headers: { 'content-type': 'application/json' } }
          : { status: 200, body: '{"received":true}', headers: { 'content-type': 'application/json' } },
    );

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(/\/partner\/webhooks$/);
    await page.getByLabel(/^URL/).fill(receiver.url('/orders'));
    await page.getByLabel(/^Description/).fill('Order system');
    await page.getByLabel('user.created').check();
    await page.getByLabel('purchase.completed').check();
    await page.getByLabel('All types, those added later too').uncheck();
    await page.getByRole('button', { name: 'Register the endpoint' }).click();
    const secret = (await page.locator('#secret').textContent())!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await shot(page, 'webhook-secret');
    await page.getByRole('link', { name: 'Back to your webhooks' }).click();
    await expect(page.locator('main').textContent()).resolves.not.toContain(secret);
    await page.getByLabel(/^URL/).fill(receiver.url('/legacy'));
    await page.getByLabel(/^Description/).fill('Old CRM');
    await page.getByRole('button', { name: 'Register the endpoint' }).click();
    await page.getByRole('link', { name: 'Back to your webhooks' }).click();

    // Three users made through the API: three deliveries to each endpoint.
    for (const email of ['ana@example.com', 'ben@example.com', 'chloe@example.com'])
      expect((await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email } })).status).toBe(200);
    await receiver.waitFor(4, (r) => r.path === '/orders', 30_000);
    const legacyRow = page.locator('tbody tr', { hasText: receiver.url('/legacy') });
    // Loaded again until it shows the service's reason (the jobs record it after the answers).
    const legacyText = await eventually(
      () => reloadedText(page, legacyRow),
      (text) => text.includes('410 Gone'),
    );
    expect(legacyText).toContain('by the service: your receiver answered 410 Gone');
    await shot(page, 'webhooks');

    await page.getByRole('link', { name: `Deliveries to ${receiver.url('/orders')}` }).click();
    await expect(page.locator('main').textContent()).resolves.toContain('database busy');
    await page
      .locator('tbody')
      .last()
      .getByRole('button', { name: /^Send .* again$/ })
      .click();
    await page.waitForURL(/\?sent=1$/);
    await receiver.waitFor(5, (r) => r.path === '/orders', 30_000);
    // Loaded again until the sending again shows its attempt.
    const sentAgain = await eventually(
      () => reloadedText(page, page.locator('main')),
      (text) => !text.includes('No attempt yet'),
    );
    expect(sentAgain).not.toContain('No attempt yet');
    expect(await page.locator('tbody').count()).toBe(4);
    await expect(page.locator('[role="status"]').textContent()).resolves.toContain('sent again');
    await shot(page, 'webhook-deliveries');

    await page.getByRole('link', { name: 'Back to your webhooks' }).click();
    const ordersRow = page.locator('tbody tr', { hasText: receiver.url('/orders') });
    await ordersRow.getByRole('button', { name: `Disable ${receiver.url('/orders')}` }).click();
    await page.waitForURL(/done=disabled$/);
    await expect(ordersRow.textContent()).resolves.toContain('by your team');

    await page.getByRole('navigation').getByRole('link', { name: 'Events' }).click();
    expect(await page.locator('tbody tr').count()).toBe(3);
    await shot(page, 'events');
    expect(problems).toEqual([]);
  }, 120_000);
  it('test mode: switch to the sandbox, see its test keys and issue one that acts as the sandbox, its statements apart; leave it', async () => {
    const partner = await api.createPartner('Sandboxed Travel');
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1200, height: 800 } });
    const page = watch(await context.newPage());
    await signUpAndIn(page, await invite(partner.partnerId, 'tess@sandboxed.example'), 'tess@sandboxed.example');
    await expect(page.locator('main').textContent()).resolves.not.toContain('dk_test_');

    await page.getByRole('button', { name: 'Switch to test mode' }).click();
    await page.waitForURL(/\/partner\/keys$/);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('Test mode');
    await expect(page.locator('main').textContent()).resolves.toContain(partner.sandbox!.prefix);
    await shot(page, 'test-mode-keys');
    await page.getByLabel('Name', { exact: true }).fill('test runner');
    await page.getByRole('button', { name: 'Issue a key' }).click();
    const testKey = (await page.locator('#api-key').textContent())!.trim();
    expect(testKey.startsWith('dk_test_')).toBe(true);
    const answer = await api.call('GET', '/v1/deals', { apiKey: testKey });
    expect([answer.status, answer.headers['deals-livemode']]).toEqual([200, 'false']);

    await page.getByRole('navigation').getByRole('link', { name: 'Statements' }).click();
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('Test mode');
    await shot(page, 'test-mode-statements');
    await page.getByRole('button', { name: 'Leave test mode' }).click();
    await page.waitForURL(/\/partner\/settlements$/);
    expect(await page.locator('.test-mode').count()).toBe(0);
    await page.getByRole('navigation').getByRole('link', { name: 'API keys' }).click();
    await expect(page.locator('main').textContent()).resolves.not.toContain('dk_test_');
    expect(problems).toEqual([]);
  }, 120_000);
  it("bulk jobs: a job's progress and each item's result, page by page, its CSV", async () => {
    const partner = await api.createPartner('Bulk Movers');
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1200, height: 800 } });
    const page = watch(await context.newPage());
    await signUpAndIn(page, await invite(partner.partnerId, 'bea@bulk.example'), 'bea@bulk.example');
    const items = [
      ...Array.from({ length: 120 }, (_, i) => ({ reference: `crm-${i}`, email: `mover${i}@example.com` })),
      { reference: 'crm-bad', email: 'not an email' },
    ];
    const accepted = await api.call('POST', '/v1/bulk_jobs', { apiKey: partner.apiKey, body: { kind: 'users', items } });
    expect(accepted.status).toBe(202);
    const id = accepted.body.bulk_job.id as string;
    const done = await eventually(
      async () => (await api.call('GET', `/v1/bulk_jobs/${id}`, { apiKey: partner.apiKey })).body.bulk_job.status,
      (status) => status === 'completed',
      60_000,
      20,
    );
    expect(done).toBe('completed');

    await page.getByRole('navigation').getByRole('link', { name: 'Bulk jobs' }).click();
    await page.waitForURL(/\/partner\/bulk-jobs$/);
    const row = page.getByRole('row').filter({ hasText: id });
    await expect(row.textContent()).resolves.toContain('completed');
    await expect(row.getByRole('progressbar').getAttribute('value')).resolves.toBe('121');
    await shot(page, 'bulk-jobs');
    await row.getByRole('link', { name: id }).click();
    await page.waitForURL(new RegExp(`/partner/bulk-jobs/${id}$`));
    await expect(page.getByRole('table', { name: 'Results so far' }).textContent()).resolves.toMatch(/Succeeded\s*120/);
    expect(
      await page
        .getByRole('table', { name: /Items, in the job's order \(page 1 of 2\)/ })
        .getByRole('row')
        .count(),
    ).toBe(101);
    await page.getByRole('link', { name: 'Next page' }).click();
    const failed = page.getByRole('row').filter({ hasText: 'crm-bad' });
    await expect(failed.textContent()).resolves.toContain('validation_failed');
    await shot(page, 'bulk-job-results');
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download the results (CSV)' }).click();
    const csv = await (await download).createReadStream();
    let text = '';
    for await (const chunk of csv) text += String(chunk);
    expect(text.trim().split('\n')).toHaveLength(122);
    // Another partner's job is no page of this one's.
    const other = await api.createPartner('Other movers');
    const theirs = (
      await api.call('POST', '/v1/bulk_jobs', {
        apiKey: other.apiKey,
        body: { kind: 'users', items: [{ reference: 'x', email: 'x@example.com' }] },
      })
    ).body.bulk_job.id;
    const response = await page.goto(`${api.url}/partner/bulk-jobs/${theirs}`);
    expect(response!.status()).toBe(404);
    expect(problems).toEqual([]);
  }, 120_000);
});
