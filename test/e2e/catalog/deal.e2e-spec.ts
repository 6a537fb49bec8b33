import { StockInventory } from '@deals/purchasing';
import type { DealImportRecord } from '@deals/runtime';
import { ManualClock } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { TestApi } from '../../support/api-harness';
import { affiliate, cardLinked, chicago, ongoingShipped, spaDay } from '../../support/catalogue-fixtures';

/** The size names of `primary_image`, as the v1 deal documents them. */
const SIZE_NAMES = [
  '_103',
  '_135',
  '_180',
  '_198',
  '_222',
  '_300',
  '_306',
  '_316',
  '_372',
  '_400',
  '_498',
  '_640',
  '_660',
  'featured',
  'large',
  'medium',
  'show',
  'thumb',
  'tiny',
  'xlarge',
];

describe('GET /deals/:deal_id and /v1/deals/:deal_id', () => {
  let api: TestApi;
  let apiKey: string;
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));

  beforeAll(async () => {
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([chicago]);
    const report = await api.importDeals([spaDay, cardLinked, ongoingShipped, affiliate]);
    expect(report.outcomes.every((o) => o.ok)).toBe(true);
  });
  afterAll(() => api.close());
  afterEach(() => clock.set('2026-06-15T12:00:00Z'));

  it('answers a daily printed deal with every field of the v1 deal', async () => {
    const reply = await api.call('GET', '/deals/chicago-spa-day', { apiKey });
    expect(reply.status).toBe(200);
    const { primary_image, ...deal } = reply.body.deal;
    expect(reply.body.status).toBe('success');
    expect(deal).toEqual({
      id: 'chicago-spa-day',
      slug: 'chicago-spa-day',
      deal_id: 'chicago-spa-day',
      affinity_score: 4.2,
      campaign: 'summer-2026',
      category: 'Health & Beauty',
      subcategory: 'Spa',
      category_id: 2,
      subcategory_id: 201,
      combine_linked_offers: null,
      custom_data: { source: 'test' },
      current_price: 4900,
      description1: 'A day of calm.',
      description2: 'For two people.',
      end_at: '2026-06-18T05:00:00Z',
      ended: false,
      expires_at: '2026-12-31T17:59:00-06:00',
      fine_print: 'Limit 2 per person.',
      fine_print_legalese: 'Void where prohibited.',
      fulfillment_method: 'printed',
      highlights: 'Massage; sauna',
      image_url: '/images/deals/chicago-spa-day.jpg',
      image_url_abs: 'https://deals.example.com/images/deals/chicago-spa-day.jpg',
      instructions: 'Print the coupon.',
      locations: [
        {
          address: {
            region: 'IL',
            postal_code: '60601',
            street: '1 Lake St',
            latitude: 41.886,
            locality: 'Chicago',
            longitude: -87.627,
            country: 'US',
          },
          hours: '9-5',
          phone: '(312) 555-0100',
        },
      ],
      low_down: 'A day of calm.',
      max_per_user: 2,
      max_gift_per_user: 1,
      merchant_name: 'Calm Spa',
      num_left: 50,
      number_sold: 0,
      soldout: false,
      purchasable_number: 2,
      purchase_url: 'https://deals.example.com/deals/chicago-spa-day/purchase',
      region_id: 'chicago',
      region_name: 'Chicago',
      region_slug: 'chicago',
      robotitle: 'Spa day Chicago',
      shipping_address_required: false,
      show_url: 'https://deals.example.com/deals/chicago-spa-day',
      situation: 'For two people.',
      start_at: '2026-06-14T05:00:00Z',
      starting_price: 4900,
      state: 'in-flight',
      supplier_id: 'acme-supply',
      supplier_slug: 'acme-supply',
      tags: ['spa', 'couples'],
      title: 'Spa day for two',
      type: 'daily-deal',
      value: 12000,
    });
    expect(Object.keys(primary_image).sort()).toEqual([...SIZE_NAMES].sort());
    for (const name of SIZE_NAMES) {
      expect(primary_image[name]).toEqual({
        size: name,
        dimensions: expect.stringMatching(/^\d+x\d+$/),
        url: `https://deals.example.com/images/deals/${name}/chicago-spa-day.jpg`,
      });
    }
  });

  it('answers the same deal under /v1 and with a .json suffix', async () => {
    const plain = await api.call('GET', '/deals/chicago-spa-day', { apiKey });
    expect((await api.call('GET', '/v1/deals/chicago-spa-day', { apiKey })).body).toEqual(plain.body);
    expect((await api.call('GET', '/v1/deals/chicago-spa-day.json', { apiKey })).body).toEqual(plain.body);
  });

  it('gives a card-linked deal its card-linked fields, and no legal text', async () => {
    const { body } = await api.call('GET', '/deals/chicago-coffee-back', { apiKey });
    expect(body.deal).toMatchObject({
      type: 'card-linked',
      fixed_fee: 25,
      incentive_amount: 500,
      incentive_percentage: null,
      max_linkage: 1000,
      maximum_allowance: 500,
      min_spend: 2000,
      num_qualifying: 1,
      offer_construct: 'Spend $20, get $5 back',
      percent_fee: 10,
      num_left: 1000,
      expires_at: null,
    });
    expect(body.deal).not.toHaveProperty('fine_print_legalese');
  });

  it('gives other types no card-linked fields; a shipped deal needs an address', async () => {
    const { body } = await api.call('GET', '/deals/chicago-headphones', { apiKey });
    expect(body.deal).toMatchObject({
      type: 'on-going',
      fulfillment_method: 'shipped',
      shipping_address_required: true,
      purchasable_number: 2,
      num_left: 2,
    });
    for (const field of ['fixed_fee', 'incentive_amount', 'max_linkage', 'offer_construct', 'fine_print_legalese'])
      expect(body.deal).not.toHaveProperty(field);
  });

  it('shows an approved deal as approved before its start, in flight after it, and ended after its end', async () => {
    const before = await api.call('GET', '/deals/chicago-free-trial', { apiKey });
    expect(before.body.deal).toMatchObject({
      type: 'affiliate',
      state: 'approved',
      ended: false,
      soldout: true,
      num_left: 0,
      purchasable_number: 0,
    });
    clock.set('2026-06-25T00:00:00Z');
    expect((await api.call('GET', '/deals/chicago-free-trial', { apiKey })).body.deal).toMatchObject({ state: 'in-flight', ended: false });
    clock.set('2026-07-20T00:00:00Z');
    expect((await api.call('GET', '/deals/chicago-free-trial', { apiKey })).body.deal).toMatchObject({
      state: 'landed',
      ended: true,
      purchasable_number: 0,
    });
  });

  it('answers 404 find_failed for an unknown deal', async () => {
    const reply = await api.call('GET', '/deals/no-such-deal', { apiKey });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ status: 'error', error_type: 'find_failed', error_msg: 'deal not found' });
  });

  it('shows a state move and a revised price made by a later import', async () => {
    await api.importDeals([{ ...ongoingShipped, current_price: 3499, state: 'paused' }]);
    const { body } = await api.call('GET', '/deals/chicago-headphones', { apiKey });
    expect(body.deal).toMatchObject({ current_price: 3499, starting_price: 3499, state: 'paused', purchasable_number: 0 });
  });

  it('refuses a whole import record whose quantity can never be stocked: no listing is left with nothing to sell', async () => {
    const report = await api.importDeals([
      { ...spaDay, id: 'chicago-spa-day-negative', quantity: -3 },
      { ...spaDay, id: 'chicago-spa-day-fraction', quantity: 2.5 },
    ]);
    expect(report.outcomes).toEqual([
      {
        id: 'chicago-spa-day-negative',
        ok: false,
        message: expect.any(String),
        issues: [{ type: 'invalid', resource: 'deal', field: 'quantity', message: 'must be a whole number, not negative' }],
      },
      {
        id: 'chicago-spa-day-fraction',
        ok: false,
        message: expect.any(String),
        issues: [{ type: 'invalid', resource: 'deal', field: 'quantity', message: 'must be a whole number, not negative' }],
      },
    ]);
    for (const id of ['chicago-spa-day-negative', 'chicago-spa-day-fraction']) {
      expect((await api.call('GET', `/deals/${id}`, { apiKey })).status).toBe(404);
    }
    // A later import with a good quantity lists and stocks it as any other.
    expect((await api.importDeals([{ ...spaDay, id: 'chicago-spa-day-negative', quantity: 3 }])).outcomes[0].ok).toBe(true);
    expect((await api.call('GET', '/deals/chicago-spa-day-negative', { apiKey })).body.deal).toMatchObject({ num_left: 3 });
  });

  it('refuses a record that is not an object like any bad record, importing the others whole', async () => {
    const good = Array.from({ length: 40 }, (_, i) => ({ ...spaDay, id: `chicago-spa-batch-${i}`, quantity: 4 }));
    const report = await api.importDeals([...good, null, 7, [spaDay]] as unknown as DealImportRecord[]);
    expect(report.outcomes.slice(40)).toEqual(
      ['#41', '#42', '#43'].map((id) => ({
        id,
        ok: false,
        message: 'must be an object',
        issues: [{ type: 'invalid', resource: 'request', field: 'record', message: 'must be an object' }],
      })),
    );
    expect(report.outcomes.slice(0, 40).every((outcome) => outcome.ok)).toBe(true);
    for (const { id } of good) expect((await api.call('GET', `/deals/${id}`, { apiKey })).body.deal).toMatchObject({ num_left: 4 });
  });

  it('refuses a record holding text no store keeps (a NUL, a lone surrogate), naming its fields, and imports the others', async () => {
    const report = await api.importDeals([
      { ...spaDay, id: 'chicago-spa-nul-title', title: 'Spa\u0000day' },
      {
        ...spaDay,
        id: 'chicago-spa-surrogate',
        fine_print: 'x\ud800',
        locations: [{ ...spaDay.locations![0], address: { ...spaDay.locations![0].address, street: '\u0000' } }],
      },
      { ...spaDay, id: 'chicago-spa-fine-text' },
    ]);
    expect(report.outcomes.map((o) => [o.id, o.ok, o.issues?.map((i) => `${i.field}: ${i.message}`)])).toEqual([
      ['chicago-spa-nul-title', false, ['title: must be well-formed Unicode text without NUL']],
      [
        'chicago-spa-surrogate',
        false,
        [
          'fine_print: must be well-formed Unicode text without NUL',
          'locations.0.address.street: must be well-formed Unicode text without NUL',
        ],
      ],
      ['chicago-spa-fine-text', true, undefined],
    ]);
    expect((await api.call('GET', '/deals/chicago-spa-nul-title', { apiKey })).status).toBe(404);
  });

  it('refuses oversized records: a title past 500 characters, other texts past 20,000, a stock past a billion', async () => {
    const report = await api.importDeals([
      { ...spaDay, id: 'chicago-spa-long-title', title: 'x'.repeat(501) },
      { ...spaDay, id: 'chicago-spa-long-print', fine_print: 'x'.repeat(20_001) },
      { ...spaDay, id: 'chicago-spa-huge-stock', quantity: 1_000_000_001 },
    ]);
    expect(report.outcomes.map((o) => [o.id, o.ok, o.issues?.map((i) => `${i.field}: ${i.message}`)])).toEqual([
      ['chicago-spa-long-title', false, ['title: must be at most 500 characters']],
      ['chicago-spa-long-print', false, ['fine_print: must be at most 20,000 characters']],
      ['chicago-spa-huge-stock', false, ['quantity: must be at most 1,000,000,000']],
    ]);
  });

  it('imports the first of two records with one id in a file and refuses the second, instead of letting them race', async () => {
    const report = await api.importDeals([
      { ...spaDay, id: 'chicago-spa-twice', quantity: 5 },
      { ...spaDay, id: 'chicago-spa-twice', quantity: 9, current_price: 1 },
    ]);
    expect(report.outcomes).toEqual([
      { id: 'chicago-spa-twice', ok: true },
      {
        id: 'chicago-spa-twice',
        ok: false,
        message: expect.stringContaining('appears more than once'),
        issues: [expect.objectContaining({ field: 'id' })],
      },
    ]);
    expect((await api.call('GET', '/deals/chicago-spa-twice', { apiKey })).body.deal).toMatchObject({
      num_left: 5,
      current_price: spaDay.current_price,
    });
  });

  it('refuses, writing nothing of the record, a quantity below the units sold and held: held units would sell past it when claimed', async () => {
    expect((await api.importDeals([{ ...spaDay, id: 'chicago-spa-held', quantity: 10, max_per_user: undefined }])).outcomes[0].ok).toBe(
      true,
    );
    const reservation = (await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: 'chicago-spa-held', num_bought: 8 } }))
      .body.purchase.id;
    const report = await api.importDeals([
      { ...spaDay, id: 'chicago-spa-held', quantity: 5, max_per_user: undefined, current_price: 9900, state: 'paused' },
    ]);
    expect(report.outcomes).toEqual([
      {
        id: 'chicago-spa-held',
        ok: false,
        message: expect.any(String),
        issues: [
          {
            type: 'invalid',
            resource: 'deal',
            field: 'quantity',
            message: 'cannot be below the 0 units already sold and the 8 held in open reservations and purchases',
          },
        ],
      },
    ]);
    // Nothing of the record was written: not the price, not the state.
    expect((await api.call('GET', '/deals/chicago-spa-held', { apiKey })).body.deal).toMatchObject({
      current_price: 4900,
      state: 'in-flight',
      num_left: 2,
    });
    const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'held-claim@example.com' } })).body.user_id;
    expect((await api.call('PUT', `/purchases/${reservation}/claim`, { apiKey, body: { user_id: buyer } })).status).toBe(200);
    await api.settle();
    expect((await api.call('GET', '/deals/chicago-spa-held', { apiKey })).body.deal).toMatchObject({ number_sold: 8, num_left: 2 });
    // Down to what is sold, once nothing is held: taken.
    expect((await api.importDeals([{ ...spaDay, id: 'chicago-spa-held', quantity: 8, max_per_user: undefined }])).outcomes[0].ok).toBe(
      true,
    );
    expect((await api.call('GET', '/deals/chicago-spa-held', { apiKey })).body.deal).toMatchObject({ number_sold: 8, num_left: 0 });
  });

  it('writes nothing of a record whose quantity is refused because units were held while it was being imported', async () => {
    expect((await api.importDeals([{ ...spaDay, id: 'chicago-spa-race', quantity: 10, max_per_user: undefined }])).outcomes[0].ok).toBe(
      true,
    );
    // A reservation lands while the record is being written: just before its quantity is stocked.
    const bus = api.get(CommandBus);
    const execute = bus.execute.bind(bus);
    let raced = false;
    bus.execute = (async (command: unknown) => {
      if (command instanceof StockInventory && !raced) {
        raced = true;
        expect(
          (await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: 'chicago-spa-race', num_bought: 8 } })).status,
        ).toBe(200);
      }
      return execute(command as never);
    }) as typeof bus.execute;
    try {
      const report = await api.importDeals([
        { ...spaDay, id: 'chicago-spa-race', quantity: 5, max_per_user: undefined, current_price: 7700, state: 'paused' },
      ]);
      expect(raced).toBe(true);
      // Refused, or taken whole: never a new price and state beside a refused quantity.
      const deal = (await api.call('GET', '/deals/chicago-spa-race', { apiKey })).body.deal;
      if (report.outcomes[0].ok) expect(deal).toMatchObject({ current_price: 7700, state: 'paused' });
      else expect(deal).toMatchObject({ current_price: 4900, state: 'in-flight', num_left: 2 });
    } finally {
      bus.execute = execute;
    }
  });
});
