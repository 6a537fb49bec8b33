import { EventStore } from '@deals/kernel';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { insecureHttps } from '../../support/insecure-https';
import { tempDir } from '../../support/temp-dir';
import { refusalProbes, Probe } from './refusal-probes';

/**
 * A refusal names the field and the rule, never the value given: every operation of the API
 * description is sent requests it refuses (unknown ids in its path, malformed or unknown values in
 * each of its fields), each value a marker of its own; no refused marker comes back in an answer, nor
 * reaches the service's log, its data folder or its events. A bulk job's refused items likewise: its
 * results (JSON and CSV) keep the partner's references and the error bodies, no item field.
 */
describe('refusals echo nothing the caller sent', () => {
  const logs = tempDir('refusal-echo-log');
  const logFile = join(logs.path, 'service.log');
  let api: TestApi;
  let apiKey: string;
  let basic: string;
  const refused = new Set<string>();
  const echoed: string[] = [];

  beforeAll(async () => {
    api = await TestApi.start({ env: { LOG_LEVEL: 'info', LOG_FILE: logFile } });
    const partner = await api.createPartner();
    apiKey = partner.apiKey;
    basic = Buffer.from(`${partner.username}:${partner.password}`).toString('base64');
    await api.importRegions([chicago]);
    await api.importDeals([spaDay]);
  });
  afterAll(async () => {
    await api?.close();
    logs.remove();
  });

  /** Sends one probe; a refusal (4xx) counts its markers, and any of them in the answer is noted. */
  async function send(probe: Probe): Promise<number> {
    const url = new URL(probe.path, api.url);
    for (const [name, value] of Object.entries(probe.query)) url.searchParams.set(name, value);
    const headers: Record<string, string> = { ...probe.headers };
    if (probe.auth === 'api_key') url.searchParams.set('api_key', apiKey);
    if (probe.auth === 'v3') headers.authorization = `Basic ${basic}`;
    let body: string | undefined;
    if (probe.body !== undefined) {
      body = probe.form ? new URLSearchParams(probe.body as Record<string, string>).toString() : JSON.stringify(probe.body);
      headers['content-type'] = probe.form ? 'application/x-www-form-urlencoded' : 'application/json';
    }
    const reply = await request(url, { method: probe.method as never, headers, body, dispatcher: insecureHttps });
    const answer = `${JSON.stringify(reply.headers)}\n${await reply.body.text()}`.toLowerCase();
    if (reply.statusCode >= 400 && reply.statusCode < 500) {
      for (const marker of probe.markers) {
        refused.add(marker);
        if (answer.includes(marker)) echoed.push(`${probe.method} ${probe.path} (${reply.statusCode}) answered ${marker}`);
      }
    }
    return reply.statusCode;
  }

  it('answers no refused request with what it was sent', async () => {
    const probes = refusalProbes(JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')));
    expect(probes.length).toBeGreaterThan(200);
    for (const probe of probes) await send(probe);
    expect(refused.size).toBeGreaterThan(400);
    expect(echoed).toEqual([]);
  });

  it("keeps a bulk job's refused items out of its results, JSON and CSV", async () => {
    const m = (n: number) => `mrk4929123456781234b${String(n).padStart(5, '0')}`;
    const jobs = [
      { kind: 'users', items: [{ email: m(1) }, { email: `${m(2)}@example.com`, first_name: m(3), birthday: m(4) }] },
      {
        kind: 'saved_deals',
        items: [
          { user_id: m(5), deal_id: m(6) },
          { user_id: m(7), deal_id: spaDay.id },
        ],
      },
      { kind: 'subscriptions', items: [{ user_id: m(8), zip: m(9), source: m(10) }] },
      { kind: 'coupon_redemptions', items: [{ coupon_id: m(11) }, { coupon_id: m(12), user_id: m(13) }] },
    ];
    const problems: string[] = [];
    for (const job of jobs) {
      const items = job.items.map((item, i) => ({ reference: `${job.kind}-${i}`, ...item }));
      const markers = items.flatMap((item) => Object.values(item).filter((v) => v.startsWith('mrk')));
      const accepted = await api.call('POST', '/v1/bulk_jobs', { apiKey, body: { kind: job.kind, items } });
      expect(accepted.status).toBe(202);
      const id = accepted.body.bulk_job.id as string;
      const done = await eventually(
        () => api.call('GET', `/v1/bulk_jobs/${id}`, { apiKey }),
        (reply) => reply.body.bulk_job?.status === 'completed',
      );
      expect(done.body.bulk_job).toMatchObject({ status: 'completed', failed_count: items.length });
      markers.forEach((marker) => refused.add(marker));
      const json = JSON.stringify((await api.call('GET', `/v1/bulk_jobs/${id}/results`, { apiKey })).body).toLowerCase();
      const csv = String((await api.call('GET', `/v1/bulk_jobs/${id}/results.csv`, { apiKey })).body).toLowerCase();
      expect(json).toContain(`${job.kind}-0`);
      for (const marker of markers) if (json.includes(marker) || csv.includes(marker)) problems.push(`${job.kind} results hold ${marker}`);
    }
    expect(problems).toEqual([]);
  });

  it('refuses a body of a type the route does not take without naming the type it was sent', async () => {
    const marker = 'mrkcontenttype4929123456781234';
    for (const type of [`application/x-www-form-urlencoded; ${marker}=1`, `multipart/form-data; boundary=${marker}`]) {
      const reply = await request(`${api.url}/users?api_key=${apiKey}`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: 'email=a%40example.com',
        dispatcher: insecureHttps,
      });
      expect(reply.statusCode).toBe(415);
      expect((await reply.body.text()).toLowerCase()).not.toContain(marker);
    }
    refused.add(marker);
  });

  it('writes no refused value to its log, its data folder or its events', async () => {
    await api.settle();
    const events = (await api.get(EventStore).readAll({ after: null, maxCount: 1_000_000 })).map((e) => JSON.stringify(e)).join('\n');
    const places: Record<string, string> = { log: readFileSync(logFile, 'latin1'), events };
    for (const file of filesUnder(api.dataDir)) places[file.slice(api.dataDir.length)] = readFileSync(file, 'latin1');
    const found = Object.entries(places).flatMap(([place, text]) => {
      const lower = text.toLowerCase();
      return [...refused].filter((marker) => lower.includes(marker)).map((marker) => `${place}: ${marker}`);
    });
    expect(found).toEqual([]);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
