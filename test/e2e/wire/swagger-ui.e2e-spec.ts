import { existsSync } from 'node:fs';
import { chromium, Browser } from 'playwright-core';
import { TestApi } from '../../support/api-harness';

/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it when it is missing). */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const suite = available ? describe : describe.skip;

suite(`Swagger UI in a browser${available ? '' : ` (skipped: no Chromium at ${CHROMIUM}; apt-get install chromium)`}`, () => {
  let api: TestApi;
  let browser: Browser;

  beforeAll(async () => {
    api = await TestApi.start();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
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
