import { createServer } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { TestApi } from '../../support/api-harness';
import { browserSuite, launchChromium } from '../../support/chromium';

/** A port free now, for an API whose PUBLIC_BASE_URL (the description's server, which "Try it out" calls) must name it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

browserSuite('Swagger UI in a browser', () => {
  let api: TestApi;
  let browser: Browser;

  beforeAll(async () => {
    const port = await freePort();
    api = await TestApi.start({ env: { PORT: String(port), PUBLIC_BASE_URL: `https://127.0.0.1:${port}` } });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  /** A page that records what the browser refused: failed requests, CSP violations (the event and the console's line), errors. */
  const watched = async () => {
    const page = await browser.newPage({ ignoreHTTPSErrors: true });
    const problems: string[] = [];
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`error: ${error.message}`));
    await page.exposeFunction('reportViolation', (text: string) => problems.push(`csp: ${text}`));
    // (Page code as text: this project's types have no DOM.)
    await page.addInitScript({
      content: "document.addEventListener('securitypolicyviolation', (e) => reportViolation(e.violatedDirective + ' ' + e.blockedURI));",
    });
    return { page, problems };
  };

  const open = async (page: Page) => {
    const answer = await page.goto(`${api.url}/api-docs`);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('.opblock', { timeout: 30_000 });
  };

  it('shows every operation, grouped by context, without credentials, under its CSP without a violation', async () => {
    const { page, problems } = await watched();
    await open(page);
    const paths = await page.$$eval('.opblock-summary-path, .opblock-summary-path__deprecated', (nodes) =>
      nodes.map((n) => n.getAttribute('data-path')),
    );
    const described = Object.keys(api.responses.document.paths);
    expect(new Set(paths)).toEqual(new Set(described));
    const tags = await page.$$eval('.opblock-tag', (nodes) => nodes.map((n) => n.getAttribute('data-tag')));
    expect(tags).toEqual(expect.arrayContaining(['accounts']));
    // Styled by its stylesheet (a refused one would leave the page unstyled).
    expect(await page.evaluate("getComputedStyle(document.querySelector('.swagger-ui .opblock-tag')).display")).toBe('flex');
    expect(problems).toEqual([]);
    if (process.env.SWAGGER_SCREENSHOT) await page.screenshot({ path: process.env.SWAGGER_SCREENSHOT, fullPage: false });
    await page.close();
  }, 60_000);

  it('works under its CSP: an operation opened, tried and its answer shown; the Authorize dialog', async () => {
    const { page, problems } = await watched();
    await open(page);
    const health = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/health"]') }).first();
    await health.locator('.opblock-summary-control').click();
    await health.getByRole('button', { name: 'Try it out' }).click();
    await health.getByRole('button', { name: 'Execute' }).click();
    const status = health.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    expect(await status.textContent()).toContain('200');
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    await page.waitForSelector('.dialog-ux .modal-ux');
    await page.locator('.dialog-ux .modal-ux .close-modal').click();
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
