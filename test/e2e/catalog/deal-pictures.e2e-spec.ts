import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { request } from 'undici';
import { ServiceConfig } from '@deals/runtime';
import { TestApi } from '../../support/api-harness';
import { InsecureHttps } from '../../support/insecure-https';

const insecure = new InsecureHttps();

describe("deals' pictures, drawn by the service", () => {
  jest.setTimeout(60_000);
  let api: TestApi;
  let apiKey: string;
  beforeAll(async () => {
    api = await TestApi.start({ env: { DEMO_DATA: 'on' } });
    apiKey = (JSON.parse(readFileSync(join(api.dataDir, 'demo-partner.json'), 'utf8')) as { api_key: string }).api_key;
  });
  afterAll(() => api.close());

  /** A picture's address on this API (the demo's links name its public address), fetched without credentials. */
  const fetchPicture = async (url: string) => {
    const reply = await request(`${api.url}${new URL(url).pathname}`, { dispatcher: insecure });
    return { status: reply.statusCode, type: reply.headers['content-type'], body: Buffer.from(await reply.body.arrayBuffer()) };
  };

  it("answers every picture address of a demo deal's v1 and v3 shapes with a PNG of its size, without credentials", async () => {
    const deals = (await api.call('GET', '/v1/deals', { apiKey })).body.deals as Array<{
      id: string;
      image_url_abs: string;
      primary_image: Record<string, { dimensions: string; url: string }>;
    }>;
    expect(deals.length).toBeGreaterThan(0);
    const deal = deals[0];
    // The demo's links name this API's own address (PUBLIC_BASE_URL), not the partner site's.
    expect(deal.image_url_abs).toBe(`${api.get(ServiceConfig).publicBaseUrl}/images/deals/${deal.id}.png`);
    const whole = await fetchPicture(deal.image_url_abs);
    expect([whole.status, whole.type]).toEqual([200, 'image/png']);
    expect([PNG.sync.read(whole.body).width, PNG.sync.read(whole.body).height]).toEqual([700, 420]);
    for (const { dimensions, url } of Object.values(deal.primary_image)) {
      const sized = await fetchPicture(url);
      expect([sized.status, sized.type]).toEqual([200, 'image/png']);
      const png = PNG.sync.read(sized.body);
      expect(`${png.width}x${png.height}`).toBe(dimensions);
    }
    const v3 = (await api.call('GET', `/api/v3/deals?fields=id,images&per_page=5`, { basic: demoBasic(api) })).body.deals as Array<{
      images: Record<string, string>;
    }>;
    for (const url of Object.values(v3[0].images)) expect((await fetchPicture(url)).status).toBe(200);
  });

  it('draws each deal its own picture, the same at every asking', async () => {
    const [a, b] = ((await api.call('GET', '/v1/deals', { apiKey })).body.deals as Array<{ image_url_abs: string }>).slice(0, 2);
    const first = await fetchPicture(a.image_url_abs);
    expect((await fetchPicture(a.image_url_abs)).body.equals(first.body)).toBe(true);
    expect((await fetchPicture(b.image_url_abs)).body.equals(first.body)).toBe(false);
  });

  it('answers 404 for a deal, a size or a name it has no picture for', async () => {
    const [deal] = (await api.call('GET', '/v1/deals', { apiKey })).body.deals as Array<{ id: string }>;
    for (const path of ['/images/deals/no-such-deal.png', `/images/deals/huge/${deal.id}.png`]) {
      const reply = await request(`${api.url}${path}`, { dispatcher: insecure });
      expect([path, reply.statusCode]).toEqual([path, 404]);
      await reply.body.text();
    }
  });
});

function demoBasic(api: TestApi): { username: string; password: string } {
  return JSON.parse(readFileSync(join(api.dataDir, 'demo-partner.json'), 'utf8')) as { username: string; password: string };
}
