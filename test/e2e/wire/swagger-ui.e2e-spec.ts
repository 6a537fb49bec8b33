import type { Browser } from 'playwright-core';
import { TestApi } from '../../support/api-harness';
import { browserSuite, launchChromium } from '../../support/chromium';

browserSuite('Swagger UI in a browser', () => {
  let api: TestApi;
  let browser: Browser;

  beforeAll(async () => {
    api = await TestApi.start();
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('shows every operation, grouped by context, without credentials', async () => {
    const page = await browser.newPage({ ignoreHTTPSErrors: true });
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(request.url()));
    await page.goto(`${api.url}/api-docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    const paths = await page.$$eval('.opblock-summary-path, .opblock-summary-path__deprecated', (nodes) =>
      nodes.map((n) => n.getAttribute('data-path')),
    );
    const described = Object.keys(api.responses.document.paths);
    expect(new Set(paths)).toEqual(new Set(described));
    const tags = await page.$$eval('.opblock-tag', (nodes) => nodes.map((n) => n.getAttribute('data-tag')));
    expect(tags).toEqual(expect.arrayContaining(['accounts']));
    expect(failed).toEqual([]);
    if (process.env.SWAGGER_SCREENSHOT) await page.screenshot({ path: process.env.SWAGGER_SCREENSHOT, fullPage: false });
    await page.close();
  }, 60_000);
});
