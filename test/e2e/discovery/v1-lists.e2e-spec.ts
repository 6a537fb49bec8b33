import { ManualClock } from '@deals/kernel';
import type { DealImportRecord } from '@deals/runtime';
import { TestApi } from '../../support/api-harness';
import { byStart, deals, ids, NOW, onSale, regions, within } from '../../support/discovery-catalogue';

const sorted = (list: DealImportRecord[]) => ids([...list].sort(byStart));

describe('v1 deal lists: /v1/deals, /deals/locate and /regions/:place/deals', () => {
  let api: TestApi;
  let apiKey: string;
  const onSaleDeals = deals.filter(onSale);

  beforeAll(async () => {
    api = await TestApi.start({ clock: new ManualClock(new Date(NOW)) });
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions(regions);
    await api.importDeals(deals);
  });
  afterAll(() => api.close());

  const get = (path: string, body?: unknown) => api.call('GET', path, { apiKey, body });
  const idsOf = async (path: string, body?: unknown) => {
    const reply = await get(path, body);
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe('success');
    return reply.body.deals.map((d: { id: string }) => d.id);
  };

  describe('GET /v1/deals', () => {
    it('lists in-flight deals in the v1 shape, earliest start first', async () => {
      const reply = await get('/v1/deals');
      expect(reply.body.deals.map((d: { id: string }) => d.id)).toEqual(sorted(onSaleDeals));
      expect(reply.body.deals[0]).toHaveProperty('primary_image');
      expect(reply.body.deals[0]).toEqual((await get(`/deals/${reply.body.deals[0].id}`)).body.deal);
    });

    it('takes its parameters as a JSON body on the GET, or in the query string', async () => {
      expect(await idsOf('/v1/deals', { title: 'SPA' })).toEqual(['chi-spa', 'ny-spa']);
      expect(await idsOf('/v1/deals?title=spa')).toEqual(['chi-spa', 'ny-spa']);
    });

    it('filters by every parameter', async () => {
      const check = async (body: Record<string, unknown>, expected: DealImportRecord[]) =>
        expect(await idsOf('/v1/deals', body)).toEqual(sorted(expected));
      await check(
        { slug: 'sf-tour' },
        onSaleDeals.filter((d) => d.id === 'sf-tour'),
      );
      await check(
        { marketplace_slug: 'mkt-headphones' },
        onSaleDeals.filter((d) => d.id === 'ny-headphones'),
      );
      await check(
        { category: 'health' },
        onSaleDeals.filter((d) => d.category === 'Health & Beauty'),
      );
      await check(
        { subcategory: 'TOUR' },
        onSaleDeals.filter((d) => d.subcategory === 'Tours'),
      );
      await check(
        { merchant: 'calm' },
        onSaleDeals.filter((d) => d.merchant_name === 'Calm Spa'),
      );
      await check(
        { price_min: 3000, price_max: 7500 },
        onSaleDeals.filter((d) => d.current_price >= 3000 && d.current_price <= 7500),
      );
      await check(
        { suppliers: ['acme-supply'] },
        onSaleDeals.filter((d) => d.supplier_id === 'acme-supply'),
      );
      await check(
        { suppliers: 'acme-supply,nobody' },
        onSaleDeals.filter((d) => d.supplier_id === 'acme-supply'),
      );
      await check(
        { vendors: 'tours-inc' },
        onSaleDeals.filter((d) => d.vendor_id === 'tours-inc'),
      );
      await check(
        { num_left: 11 },
        onSaleDeals.filter((d) => (d.quantity ?? 0) >= 11),
      );
      await check(
        { exclude_soldout: true },
        onSaleDeals.filter((d) => d.quantity !== 0),
      );
      await check(
        { card_links_redeemed: false },
        onSaleDeals.filter((d) => d.type !== 'card-linked'),
      );
      await check(
        { runs_min: '2026-06-21', runs_max: '2026-06-30' },
        onSaleDeals.filter((d) => Date.parse(d.end_at) >= Date.parse('2026-06-21') && Date.parse(d.start_at) <= Date.parse('2026-06-30')),
      );
      await check(
        { latitude: 41.8781, longitude: -87.6298, radius: 2 },
        onSaleDeals.filter((d) => within(d, 41.8781, -87.6298, 2)),
      );
    });

    it('filters by workflow state, or shows every state', async () => {
      expect(await idsOf('/v1/deals', { state: 'approved' })).toEqual(['chi-future']);
      expect(await idsOf('/v1/deals', { state: 'paused' })).toEqual(['chi-paused']);
      expect(await idsOf('/v1/deals', { state: 'landed' })).toEqual(['chi-landed']);
      expect(await idsOf('/v1/deals', { show_all: true })).toEqual(sorted(deals));
    });

    it('finds the region by slug, spelled-out city, zip code or IP address', async () => {
      const chicago = sorted(onSaleDeals.filter((d) => d.region_id === 'chicago'));
      expect(await idsOf('/v1/deals', { region: 'chicago' })).toEqual(chicago);
      expect(await idsOf('/v1/deals', { region: 'Chicago,IL' })).toEqual(chicago);
      expect(await idsOf('/v1/deals', { region: '60602' })).toEqual(chicago);
      // 60611 (Streeterville) is listed by no region; Chicago is the nearest, ~1 mile away.
      expect(await idsOf('/v1/deals', { region: '60611' })).toEqual(chicago);
      const unknown = await get('/v1/deals', { region: 'atlantis' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ status: 'error', error_type: 'find_failed', error_msg: 'region not found' });
    });

    it('counts instead of listing, and pages', async () => {
      expect((await get('/v1/deals', { count: true, per_page: 5000 })).body).toEqual({ status: 'success', count: onSaleDeals.length });
      expect(await idsOf('/v1/deals', { per_page: 4, page: 2 })).toEqual(sorted(onSaleDeals).slice(4, 8));
      expect(await idsOf('/v1/deals', { per_page: 4, page: 9 })).toEqual([]);
    });

    it('refuses bad parameters, naming each', async () => {
      const reply = await get('/v1/deals', {
        show_all: false,
        exclude_soldout: 'maybe',
        latitude: 41,
        radius: -1,
        state: 'flying',
        user: 'someone',
        price_min: -5,
        runs_min: 'soon',
      });
      expect(reply.status).toBe(422);
      expect(reply.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
        'exclude_soldout',
        'longitude',
        'price_min',
        'radius',
        'runs_min',
        'show_all',
        'state',
        'user',
      ]);
      expect((await get('/v1/deals', [1, 2])).status).toBe(422);
      expect((await get('/v1/deals', { user: 'someone', region: 'chicago', card_links_redeemed: false })).status).toBe(200);
    });
  });

  describe('GET /deals/locate', () => {
    it('lists deals on sale within the radius, earliest start first', async () => {
      expect(await idsOf('/deals/locate?latitude=41.8781&longitude=-87.6298&radius=2')).toEqual(
        sorted(onSaleDeals.filter((d) => within(d, 41.8781, -87.6298, 2))),
      );
      expect(await idsOf('/deals/locate', { latitude: 40.758, longitude: -73.9855, radius: 3000 })).toEqual(
        sorted(onSaleDeals.filter((d) => within(d, 40.758, -73.9855, 3000))),
      );
    });
    it('requires latitude, longitude and radius', async () => {
      const reply = await get('/deals/locate?latitude=91');
      expect(reply.status).toBe(422);
      expect(reply.body.errors).toEqual([
        { type: 'invalid', resource: 'deal', field: 'latitude', message: 'must be a number from -90 to 90' },
        { type: 'missing_field', resource: 'deal', field: 'longitude', message: 'is required' },
        { type: 'missing_field', resource: 'deal', field: 'radius', message: 'is required' },
      ]);
    });
    it('GET /v1/deals refuses a runs_min day the calendar does not have', async () => {
      const reply = await get('/v1/deals?runs_min=2024-02-30');
      expect([reply.status, reply.body.errors?.[0]?.field]).toEqual([422, 'runs_min']);
    });
    it('refuses parameters of the wrong shape with error bodies, never a 500: nested arrays, overlong text, numbers in other notations, unbounded radii', async () => {
      const nested = await api.call('GET', '/v1/deals', { apiKey, jsonText: `{"count":${'['.repeat(40)}${']'.repeat(40)}}` });
      expect([nested.status, nested.body.errors]).toEqual([
        422,
        [{ type: 'invalid', resource: 'deal', field: 'count', message: 'must be true or false' }],
      ]);
      // Nested deeper than any body is read: refused before anything walks it.
      const deepest = await api.call('GET', '/v1/deals', { apiKey, jsonText: `{"count":${'['.repeat(20_000)}${']'.repeat(20_000)}}` });
      expect([deepest.status, deepest.body.error_type]).toEqual([400, 'bad_request']);
      expect((await get('/v1/deals', { suppliers: [{ a: 1 }] })).body.errors).toEqual([
        { type: 'invalid', resource: 'deal', field: 'suppliers', message: 'must be a list of text or comma-separated text' },
      ]);
      const long = await get('/v1/deals', { title: 'a'.repeat(40_000), count: true });
      expect([long.status, long.body.errors]).toEqual([
        422,
        [{ type: 'invalid', resource: 'deal', field: 'title', message: 'must be at most 256 characters' }],
      ]);
      const hex = await get('/deals/locate?latitude=0x28&longitude=-74&radius=5');
      expect(hex.body.errors).toEqual([
        { type: 'invalid', resource: 'deal', field: 'latitude', message: 'must be a number from -90 to 90' },
      ]);
      const far = await get('/deals/locate?latitude=40&longitude=-74&radius=0');
      expect(far.body.errors).toEqual([
        { type: 'invalid', resource: 'deal', field: 'radius', message: 'must be a number of miles above 0, at most 12500' },
      ]);
      expect((await get('/v1/deals', { latitude: 40, longitude: -74, radius: 1e300 })).body.errors).toEqual([
        { type: 'invalid', resource: 'deal', field: 'radius', message: 'must be more than 0 miles, at most 12500' },
      ]);
    });
    it('reads blank coordinates as missing, not as 0', async () => {
      const reply = await get('/deals/locate?latitude=%20&longitude=%20&radius=5');
      expect([reply.status, reply.body.errors?.map((e: { field: string; type: string }) => `${e.field}:${e.type}`)]).toEqual([
        422,
        ['latitude:missing_field', 'longitude:missing_field'],
      ]);
    });
  });

  describe('GET /regions/:place/deals', () => {
    const chicagoDefault = onSaleDeals.filter(
      (d) => d.region_id === 'chicago' && Date.parse(d.start_at) <= NOW && !(d.tags ?? []).includes('bg'),
    );

    it('lists a region by slug, zip or spelled-out city, with the default filter in_flight,current,not_bg', async () => {
      for (const place of ['chicago', '60601', 'Chicago,IL', 'chicago,il', 'Chicago%2CIL'])
        expect(await idsOf(`/regions/${place}/deals`)).toEqual(sorted(chicagoDefault));
      expect(await idsOf('/regions/San%20Francisco,CA/deals')).toEqual(['sf-card', 'sf-tour']);
    });

    it('applies the filter words given instead', async () => {
      expect(await idsOf('/regions/chicago/deals?filter=in_flight')).toEqual(sorted(onSaleDeals.filter((d) => d.region_id === 'chicago')));
      expect(await idsOf('/regions/san-francisco/deals?filter=in_flight,offer')).toEqual(['sf-card']);
      // Running now in any public state (a cancelled deal is not listed, whatever the words).
      expect(await idsOf('/regions/chicago/deals?filter=current')).toEqual(
        sorted(
          deals.filter(
            (d) => d.region_id === 'chicago' && Date.parse(d.start_at) <= NOW && Date.parse(d.end_at) > NOW && d.state !== 'cancelled',
          ),
        ),
      );
      expect(await idsOf('/regions/chicago/deals?filter=current')).not.toContain('chi-cancelled');
      const bad = await get('/regions/chicago/deals?filter=in_flight,cheap');
      expect(bad.status).toBe(422);
      expect(bad.body.errors[0]).toMatchObject({ field: 'filter' });
    });

    it('counts, pages, and answers 404 for a place no region serves', async () => {
      expect((await get('/regions/chicago/deals?count=true')).body).toEqual({ status: 'success', count: chicagoDefault.length });
      expect(await idsOf('/regions/chicago/deals?per_page=1&page=2')).toEqual(sorted(chicagoDefault).slice(1, 2));
      for (const place of ['nowhere', '99950', 'Springfield,IL']) {
        const reply = await get(`/regions/${place}/deals`);
        expect(reply.status).toBe(404);
        expect(reply.body.error_type).toBe('find_failed');
      }
    });
  });
});
