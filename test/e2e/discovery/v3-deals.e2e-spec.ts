import { ManualClock } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { byEndDesc, byStart, deals, ids, NOW, onSale, regions, within } from '../../support/discovery-catalogue';

describe('GET /api/v3/deals', () => {
  let api: TestApi;
  let basic: { username: string; password: string };
  const onSaleDeals = deals.filter(onSale);

  beforeAll(async () => {
    api = await TestApi.start({ clock: new ManualClock(new Date(NOW)) });
    const partner = await api.createPartner();
    basic = { username: partner.username, password: partner.password };
    await api.importRegions(regions);
    expect((await api.importDeals(deals)).outcomes.every((o) => o.ok)).toBe(true);
  });
  afterAll(() => api.close());

  const v3 = (query: Record<string, string>) => api.call('GET', `/api/v3/deals?${new URLSearchParams(query)}`, { basic });
  const idsOf = async (query: Record<string, string>) => {
    const reply = await v3({ fields: 'id', ...query });
    expect(reply.status).toBe(200);
    return reply.body.deals.map((d: { id: string }) => d.id);
  };

  it('lists only in-flight deals, latest end first, with every v3 field when none are asked', async () => {
    const reply = await v3({});
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual(['deals', 'next_page']);
    expect(reply.body.deals.map((d: { id: string }) => d.id)).toEqual(ids([...onSaleDeals].sort(byEndDesc)));
    expect(reply.body.next_page).toBeNull();
    const spa = reply.body.deals.find((d: { id: string }) => d.id === 'chi-spa');
    expect(spa).toEqual({
      id: 'chi-spa',
      campaign: '',
      category: 'Health & Beauty',
      category_id: null,
      cost: null,
      description1: '',
      description2: '',
      end_at: '2026-06-18T00:00:00Z',
      expiration_days: null,
      expires_at: null,
      fine_print: '',
      fulfillment_method: 'redemptioncoded',
      highlights: '',
      images: {
        large: 'https://deals.example.com/images/deals/large/chi-spa.jpg',
        medium: 'https://deals.example.com/images/deals/medium/chi-spa.jpg',
        small: 'https://deals.example.com/images/deals/small/chi-spa.jpg',
        tiny: 'https://deals.example.com/images/deals/tiny/chi-spa.jpg',
      },
      instructions: '',
      locations: [
        {
          address: {
            address_id: 'chi-spa-1',
            region: 'XX',
            postal_code: '00000',
            street: '1 Main St',
            latitude: 41.886,
            locality: 'x',
            longitude: -87.627,
            country: 'US',
          },
          hours: '',
          phone: '',
        },
      ],
      max_per_user: null,
      max_gift_per_user: null,
      merchant_id: '',
      merchant_name: 'Calm Spa',
      num_left: 50,
      number_sold: 0,
      purchase_url: 'https://deals.example.com/deals/chi-spa/purchase',
      region_id: 'chicago',
      region_name: 'Chicago',
      robotitle: 'Spa day for two',
      shipping_address_required: false,
      show_url: 'https://deals.example.com/deals/chi-spa',
      sold_out: false,
      soldout: false,
      start_at: '2026-06-14T00:00:00Z',
      starting_price: 4900,
      state: 'in-flight',
      subcategory: 'Spa',
      subcategory_id: null,
      supplier_id: '',
      tags: [],
      title: 'Spa day for two',
      type: 'daily-deal',
      value: 5000,
    });
    for (const d of reply.body.deals)
      for (const field of ['image_url', 'image_url_abs', 'primary_image']) expect(d).not.toHaveProperty(field);
  });

  it('returns exactly the fields asked, in the order asked, with sub-fields', async () => {
    const reply = await v3({
      fields: 'title,id,images[small,large],locations[phone],sold_out',
      filter: 'region[chicago]',
      sort: 'id(asc)',
      per_page: '1',
    });
    expect(reply.body.deals).toEqual([
      {
        title: 'Pizza night',
        id: 'chi-approved-now',
        images: {
          small: 'https://deals.example.com/images/deals/small/chi-approved-now.jpg',
          large: 'https://deals.example.com/images/deals/large/chi-approved-now.jpg',
        },
        locations: [],
        sold_out: false,
      },
    ]);
    expect(Object.keys(reply.body.deals[0])).toEqual(['title', 'id', 'images', 'locations', 'sold_out']);
    const card = await v3({ fields: 'id,fixed_fee,fine_print_legalese', filter: 'region[san-francisco]', sort: 'id(asc)' });
    expect(card.body.deals).toEqual([
      { id: 'sf-card', fixed_fee: null, fine_print_legalese: null },
      { id: 'sf-tour', fixed_fee: null, fine_print_legalese: null },
    ]);
  });

  it('sorts by any sortable attribute in either direction, ties by id', async () => {
    expect(await idsOf({ sort: 'start_at(asc)' })).toEqual(ids([...onSaleDeals].sort(byStart)));
    expect(await idsOf({ sort: 'start_at(desc)' })).toEqual(
      ids([...onSaleDeals].sort((a, b) => Date.parse(b.start_at) - Date.parse(a.start_at) || (a.id < b.id ? -1 : 1))),
    );
    expect(await idsOf({ sort: 'price(asc)' })).toEqual(
      ids([...onSaleDeals].sort((a, b) => a.current_price - b.current_price || (a.id < b.id ? -1 : 1))),
    );
    expect(await idsOf({ sort: 'title(asc)' })).toEqual(
      ids([...onSaleDeals].sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0))),
    );
  });

  it("refuses sorting on names that are not sortable attributes, Object.prototype's included", async () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const reply = await v3({ sort: `${name}(asc)` });
      expect([name, reply.status, reply.body.errors?.[0]?.field]).toEqual([name, 422, 'sort']);
    }
  });

  it('filters by category, subcategory and region, case-insensitively for names', async () => {
    expect(await idsOf({ filter: 'category[health & beauty,Activities]', sort: 'id(asc)' })).toEqual(
      ids(onSaleDeals.filter((d) => ['Health & Beauty', 'Activities'].includes(d.category!)).sort((a, b) => (a.id < b.id ? -1 : 1))),
    );
    expect(await idsOf({ filter: 'subcategory[Spa]', sort: 'id(asc)' })).toEqual(['chi-spa', 'ny-spa']);
    expect(await idsOf({ filter: 'region[new-york,san-francisco]', sort: 'id(asc)' })).toEqual([
      'ny-affiliate',
      'ny-headphones',
      'ny-spa',
      'sf-card',
      'sf-tour',
    ]);
  });

  it('filters by price with each operator and with an exact list', async () => {
    const cents = (test: (p: number) => boolean) =>
      ids(onSaleDeals.filter((d) => test(d.current_price)).sort((a, b) => (a.id < b.id ? -1 : 1)));
    const sorted = { sort: 'id(asc)' };
    expect(await idsOf({ ...sorted, filter: 'price<3000' })).toEqual(cents((p) => p < 3000));
    expect(await idsOf({ ...sorted, filter: 'price<=3000' })).toEqual(cents((p) => p <= 3000));
    expect(await idsOf({ ...sorted, filter: 'price>3000' })).toEqual(cents((p) => p > 3000));
    expect(await idsOf({ ...sorted, filter: 'price>=3999,price<=7500' })).toEqual(cents((p) => p >= 3999 && p <= 7500));
    expect(await idsOf({ ...sorted, filter: 'price=0' })).toEqual(cents((p) => p === 0));
    expect(await idsOf({ ...sorted, filter: 'price[1000,4900]' })).toEqual(cents((p) => p === 1000 || p === 4900));
  });

  it('filters by spelled-out city and state, one or several, with %20 spaces', async () => {
    expect(await idsOf({ filter: 'region_city[San Francisco,CA]', sort: 'id(asc)' })).toEqual(['sf-card', 'sf-tour']);
    expect(await idsOf({ filter: 'region_city[San%20Francisco,ca]', sort: 'id(asc)' })).toEqual(['sf-card', 'sf-tour']);
    expect(await idsOf({ filter: 'region_city[[San%20Francisco,CA],[New York,NY]]', sort: 'id(asc)' })).toEqual([
      'ny-affiliate',
      'ny-headphones',
      'ny-spa',
      'sf-card',
      'sf-tour',
    ]);
    expect(await idsOf({ filter: 'region_city[Springfield,IL]' })).toEqual([]);
  });

  it('filters by distance in great-circle miles from a point', async () => {
    const near = (lat: number, lng: number, r: number) =>
      ids(onSaleDeals.filter((d) => within(d, lat, lng, r)).sort((a, b) => (a.id < b.id ? -1 : 1)));
    expect(await idsOf({ filter: 'lat_long[41.8781,-87.6298,1]', sort: 'id(asc)' })).toEqual(near(41.8781, -87.6298, 1));
    expect(await idsOf({ filter: 'lat_long[41.8781,-87.6298,2]', sort: 'id(asc)' })).toEqual(near(41.8781, -87.6298, 2));
    expect(near(41.8781, -87.6298, 1)).toEqual(['chi-spa']);
    expect(near(41.8781, -87.6298, 2)).toEqual(['chi-dinner', 'chi-spa']);
    expect(await idsOf({ filter: 'lat_long[40.758,-73.9855,0.1]' })).toEqual(['ny-spa']);
    expect(await idsOf({ filter: 'lat_long[40.758,-73.9855,2500]', sort: 'id(asc)' })).toEqual(near(40.758, -73.9855, 2500));
    expect(await idsOf({ filter: 'lat_long[40.758,-73.9855,3000]', sort: 'id(asc)' })).toEqual([
      'chi-dinner',
      'chi-spa',
      'ny-spa',
      'sf-tour',
    ]);
    // A radius past half the Earth's circumference (a 400-digit one read as Infinity) is refused.
    for (const radius of ['12501', `1${'0'.repeat(400)}`]) {
      const refused = await v3({ filter: `lat_long[0,0,${radius}]` });
      expect([refused.status, refused.body.errors?.[0]?.field]).toEqual([422, 'filter']);
    }
  });

  it('filters sold-out deals in or out, and ANDs every condition', async () => {
    expect(await idsOf({ filter: 'sold_out[true]' })).toEqual(['chi-dinner']);
    expect(await idsOf({ filter: 'sold_out[false]' })).not.toContain('chi-dinner');
    expect(await idsOf({ filter: 'region[chicago],category[Food & Drink],price<2800,sold_out[false]', sort: 'id(asc)' })).toEqual([
      'chi-approved-now',
      'chi-bg',
    ]);
  });

  it('pages with a next_page that carries the same fields, filter and sort', async () => {
    const all = ids([...onSaleDeals].sort(byStart));
    const first = await v3({ fields: 'id', sort: 'start_at(asc)', filter: 'sold_out[false]', per_page: '3' });
    const expected = all.filter((id) => id !== 'chi-dinner');
    expect(first.body.deals.map((d: { id: string }) => d.id)).toEqual(expected.slice(0, 3));
    const next = new URL(first.body.next_page);
    expect(Object.fromEntries(next.searchParams)).toEqual({
      fields: 'id',
      filter: 'sold_out[false]',
      sort: 'start_at(asc)',
      page: '2',
      per_page: '3',
    });
    const collected = [...first.body.deals];
    let url: string | null = first.body.next_page;
    while (url) {
      const page = await api.call('GET', new URL(url).pathname + new URL(url).search, { basic });
      collected.push(...page.body.deals);
      url = page.body.next_page;
    }
    expect(collected.map((d) => d.id)).toEqual(expected);
    expect((await v3({ fields: 'id', per_page: '4', page: '3' })).body).toEqual({
      deals: [{ id: ids([...onSaleDeals].sort(byEndDesc))[8] }],
      next_page: null,
    });
    expect((await v3({ fields: 'id', page: '99' })).body).toEqual({ deals: [], next_page: null });
    expect((await v3({ fields: 'id', per_page: '1000' })).body.deals).toHaveLength(onSaleDeals.length);
  });

  it('refuses per_page above 1000 and a page below 1', async () => {
    for (const [query, field] of [
      [{ per_page: '1001' }, 'per_page'],
      [{ per_page: '0' }, 'per_page'],
      [{ page: '0' }, 'page'],
      [{ page: 'two' }, 'page'],
    ] as const) {
      const reply = await v3(query);
      expect(reply.status).toBe(422);
      expect(reply.body).toMatchObject({ status: 'error', error_type: 'validation_failed', errors: [expect.objectContaining({ field })] });
    }
  });

  it('refuses malformed fields, sort and filter with a 422 naming each bad part', async () => {
    const reply = await v3({ fields: 'id,colour', sort: 'start_at(sideways)', filter: 'price~5,region[chicago' });
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toEqual([
      { type: 'invalid', resource: 'deal', field: 'fields', message: 'names an unknown attribute "colour"' },
      { type: 'invalid', resource: 'deal', field: 'sort', message: 'must be attribute(asc) or attribute(desc), got "start_at(sideways)"' },
      { type: 'invalid', resource: 'deal', field: 'filter', message: 'is malformed: "price~5,region[chicago"' },
    ]);
    expect((await v3({ filter: 'price~5' })).body.errors).toEqual([
      { type: 'invalid', resource: 'deal', field: 'filter', message: 'is malformed at "price~5"' },
    ]);
  });
});
