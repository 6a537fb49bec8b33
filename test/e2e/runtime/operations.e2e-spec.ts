import { ManualClock } from '@deals/kernel';
import { operatorPassword, ServiceConfig } from '@deals/runtime';
import { request } from 'undici';
import { runCli, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { ApiProcess, freePort } from '../../support/api-process';
import { tempDir } from '../../support/temp-dir';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InsecureHttps } from '../../support/insecure-https';

const insecure = new InsecureHttps();
const OPERATOR_PASSWORD = 'operator-password-for-tests';
const operator = (password = OPERATOR_PASSWORD) => ({ authorization: `Basic ${Buffer.from(`operator:${password}`).toString('base64')}` });

/** A sample of Prometheus' text format: `name{label="value",...} number`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the exposition format; a line it cannot read fails the test (the page must be well formed). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/i.exec(line);
    if (!match) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[name] = value;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

const sample = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('operations over HTTPS: /metrics and /admin/jobs behind the operator credentials', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;

  beforeAll(async () => {
    api = await TestApi.start({ clock, env: { OPERATOR_PASSWORD } });
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, quantity: 10, max_per_user: 4 }]);
  });
  afterAll(() => api.close());

  const scrape = async (headers: Record<string, string>) => {
    const reply = await request(`${api.url}/metrics`, { headers, dispatcher: insecure });
    return { status: reply.statusCode, headers: reply.headers, text: await reply.body.text() };
  };

  it('refuses the metrics without the operator credentials, with partner credentials and with a wrong password', async () => {
    const none = await scrape({});
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Basic realm="deals operations"/);
    expect(JSON.parse(none.text)).toMatchObject({ status: 'error', error_type: 'unauthorized' });
    expect((await scrape(operator('not-the-operator-password'))).status).toBe(401);
    const asPartner = await request(`${api.url}/metrics?api_key=${apiKey}`, { dispatcher: insecure });
    expect(asPartner.statusCode).toBe(401);
    await asPartner.body.text();
  });

  it('serves requests by route template and status, appends, commits, purchases, coupons, charges, lag, jobs and the process', async () => {
    const user = (await api.call('POST', '/users', { apiKey, body: { email: 'metrics@example.com' } })).body.user_id;
    const card = (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: user, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    const declined = (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: user, number: '4000000000000002', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    const buy = (credit_card_id: string) =>
      api.call('POST', '/purchases', {
        apiKey,
        body: { deal_id: 'chicago-spa-day', quantity: 2, user_id: user, credit_card_id, expected_price_per_unit: 4900 },
      });
    expect((await buy(card)).status).toBe(200);
    expect((await buy(declined)).status).toBe(422);
    for (let i = 0; i < 3; i++) expect((await api.call('GET', '/deals/chicago-spa-day', { apiKey })).status).toBe(200);
    expect((await api.call('GET', '/deals/no-such-deal', { apiKey })).status).toBe(404);
    // A reservation arms its hold's release job.
    expect((await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: 'chicago-spa-day', num_bought: 1 } })).status).toBe(
      200,
    );
    await api.settle();

    const page = await scrape(operator());
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parseMetrics(page.text);
    const requests = (route: string, status: string) =>
      sample(samples, 'deals_http_request_duration_seconds_count', { method: 'GET', route, status });
    expect(requests('/deals/:deal_id', '200')).toBe(3);
    expect(requests('/deals/:deal_id', '404')).toBe(1);
    // Route templates, never paths: no id reaches a label.
    expect(samples.some((s) => Object.values(s.labels).some((v) => v.includes('chicago-spa-day')))).toBe(false);
    expect(sample(samples, 'deals_event_store_appends_total')).toBeGreaterThan(5);
    expect(sample(samples, 'deals_event_store_events_total', { type: 'PurchasePaid' })).toBe(1);
    expect(sample(samples, 'deals_event_store_commit_group_size_count')).toBeGreaterThan(0);
    expect(sample(samples, 'deals_event_store_commit_duration_seconds_count')).toBeGreaterThan(0);
    expect(sample(samples, 'deals_purchases_total', { outcome: 'paid' })).toBe(1);
    expect(sample(samples, 'deals_purchases_total', { outcome: 'not_paid' })).toBe(1);
    expect(sample(samples, 'deals_purchases_total', { outcome: 'reserved' })).toBe(3);
    expect(sample(samples, 'deals_charges_total', { outcome: 'charged' })).toBe(1);
    expect(sample(samples, 'deals_charges_total', { outcome: 'declined' })).toBe(1);
    expect(sample(samples, 'deals_coupons_total', { outcome: 'issued' })).toBe(2);
    expect(sample(samples, 'deals_projection_lag_events', { view: 'deal_details_v3' })).toBe(0);
    expect(sample(samples, 'deals_projection_lag_seconds', { view: 'purchase_details_v3' })).toBe(0);
    expect(sample(samples, 'deals_scheduled_jobs', { state: 'waiting' })).toBeGreaterThanOrEqual(1);
    expect(sample(samples, 'deals_scheduled_jobs', { state: 'failed' })).toBe(0);
    expect(sample(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(samples, 'nodejs_eventloop_lag_p99_seconds')).toBeDefined();
    // No card number, CVV or key is ever a label or a value.
    expect(page.text).not.toMatch(/4242424242424242|4000000000000002|api_key|dk_/);
    // Every metric the Grafana dashboard in docs/ charts is one this page serves.
    const dashboard = JSON.parse(readFileSync(join(__dirname, '../../../docs/grafana-dashboard.json'), 'utf8')) as {
      panels: Array<{ targets: Array<{ expr: string }> }>;
    };
    const served = new Set(samples.map((s) => s.name));
    const charted = dashboard.panels.flatMap((panel) =>
      panel.targets.flatMap((t) => t.expr.match(/\b(?:deals|process|nodejs)_[a-z0-9_]+/g) ?? []),
    );
    expect(charted.length).toBeGreaterThan(10);
    expect(charted.filter((name) => !served.has(name))).toEqual([]);
  });

  it("lists the jobs of the timers at /admin/jobs: the holds' sweep, armed at the start", async () => {
    const reply = await request(`${api.url}/admin/jobs`, { headers: operator(), dispatcher: insecure });
    expect(reply.statusCode).toBe(200);
    const list = (await reply.body.json()) as {
      backend: string;
      counts: Record<string, number>;
      jobs: Array<{ kind: string; state: string }>;
    };
    expect(list.backend).toBe('in-process');
    expect(list.jobs.some((job) => job.kind === 'release-due-holds' && job.state === 'waiting')).toBe(true);
    expect(list.counts.waiting).toBe(list.jobs.filter((job) => job.state === 'waiting').length);
  });
});

describe('METRICS_PORT: the metrics on a port of their own, plain HTTP, without credentials', () => {
  let api: TestApi;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    api = await TestApi.start({ env: { METRICS_PORT: String(port) } });
  });
  afterAll(() => api.close());

  it('serves them there, and no longer at /metrics on the API port', async () => {
    const reply = await request(`http://127.0.0.1:${port}/metrics`);
    expect(reply.statusCode).toBe(200);
    expect(parseMetrics(await reply.body.text()).some((s) => s.name === 'process_cpu_seconds_total')).toBe(true);
    const password = operatorPassword(api.get(ServiceConfig));
    const onApi = await request(`${api.url}/metrics`, { headers: operator(password), dispatcher: insecure });
    expect(onApi.statusCode).toBe(404);
    await onApi.body.text();
  });
});

describe("partners:invite: the link names the running API's address", () => {
  jest.setTimeout(120_000);
  const dir = tempDir('invite-link');
  afterAll(() => dir.remove());

  it('names the address the API serving the data folder recorded, and says when no API serves it', async () => {
    const port = await freePort();
    const api = await ApiProcess.start(dir.path, port);
    let partnerId: string;
    try {
      partnerId = JSON.parse((await runCli(dir.path, ['partners:create', '--name', 'Invited', '--json'], {})).stdout).partner_id;
      const invited = await runCli(dir.path, ['partners:invite', partnerId, 'first@example.com', '--json'], {});
      expect(invited.code).toBe(0);
      expect(JSON.parse(invited.stdout).sign_up_url).toMatch(new RegExp(`^https://localhost:${port}/partner/sign-up\\?token=`));
    } finally {
      await api.stop();
    }
    const later = await runCli(dir.path, ['partners:invite', partnerId, 'second@example.com'], {});
    expect(later.code).toBe(0);
    expect(later.stdout).toContain('https://localhost:3000/partner/sign-up?token=');
    expect(later.stdout).toContain('No API serves');
  });
});

describe('jobs:list on the embedded mode: the running API is asked for its timers', () => {
  jest.setTimeout(120_000);
  const dir = tempDir('jobs-list');
  afterAll(() => dir.remove());

  it("lists the running API's jobs, found by the address it recorded whatever the CLI's PORT, and says plainly when no API runs on the data folder", async () => {
    const port = await freePort();
    const absent = await runCli(dir.path, ['jobs:list'], { PORT: String(port) });
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain(`no API answers at 127.0.0.1:${port} (no API recorded its address in`);
    const api = await ApiProcess.start(dir.path, port);
    try {
      // No PORT here: the CLI's own would be 3000.
      const env = {};
      const listed = await runCli(dir.path, ['jobs:list'], env);
      expect(listed.code).toBe(0);
      // Armed at every start: the hourly re-arming of the batches' and the daily emails' jobs, and the
      // coupon-expiry and holds' sweeps (their first runs at the start, on an empty log at once; the
      // next in 10 and 5 minutes).
      expect(listed.stdout).toMatch(/^jobs \(in-process\): 4 waiting, 0 due, 0 running, 0 failed$/m);
      expect(listed.stdout).toMatch(/waiting\s+arm-batches\s+arm-batches/);
      expect(listed.stdout).toMatch(/waiting\s+expire-coupons\s+expire-coupons\b/);
      expect(listed.stdout).toMatch(/waiting\s+release-due-holds\s+release-due-holds\b/);
      const json = JSON.parse((await runCli(dir.path, ['jobs:list', '--json'], env)).stdout);
      expect(json.jobs.map((job: { kind: string }) => job.kind).sort()).toEqual([
        'arm-batches',
        'arm-digests',
        'expire-coupons',
        'release-due-holds',
      ]);
    } finally {
      await api.stop();
    }
  });
});
