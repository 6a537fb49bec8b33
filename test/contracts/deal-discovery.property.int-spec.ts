import fc from 'fast-check';
import { DealDetails, DEAL_DETAILS } from '@deals/catalog/projections/deal-details/deal-details.projection';
import { searchFields } from '@deals/catalog/projections/deal-details/deal-details.projection';
import { parseV3Query } from '@deals/catalog/queries/v3-query';
import { v3Filter } from '@deals/catalog/queries/v3-filter';
import type { DealTerms, WorkflowState } from '@deals/catalog/domain/deal/deal-terms';
import { MingoViewStore } from '@deals/adapters/view-store/mingo/mingo-view-store.adapter';
import { dealDetailsProjection } from '@deals/catalog/projections/deal-details/deal-details.projection';
import { tempDir } from '../support/temp-dir';

/**
 * For random catalogues and random v3 queries, the embedded view store answers exactly what a plain
 * filter and sort written here, independently of the service's query code, answers.
 */
const NOW = Date.parse('2026-06-15T12:00:00Z');
const HOUR = 3_600_000;
const CATEGORIES = ['Food & Drink', 'Activities', 'Health & Beauty', 'Products'];
const REGIONS = ['chicago', 'boston', 'austin'];
const STATES: WorkflowState[] = ['in-flight', 'approved', 'paused', 'landed', 'submitted'];
const SORTABLE = ['id', 'title', 'start_at', 'end_at', 'price', 'value', 'num_left'] as const;

interface Case {
  id: string;
  title: string;
  category: string;
  region: string;
  price: number;
  value: number;
  state: WorkflowState;
  startAt: number;
  endAt: number;
  total: number;
  lat: number | null;
  lng: number | null;
}

const caseArb = (i: number) =>
  fc
    .record({
      title: fc.constantFrom('Spa', 'Dinner', 'Tour', 'spa day', 'Zoo'),
      category: fc.constantFrom(...CATEGORIES),
      region: fc.constantFrom(...REGIONS),
      price: fc.integer({ min: 0, max: 20 }).map((n) => n * 500),
      value: fc.integer({ min: 1, max: 10 }).map((n) => n * 1000),
      state: fc.constantFrom(...STATES),
      start: fc.integer({ min: -72, max: 24 }),
      hours: fc.integer({ min: 1, max: 120 }),
      total: fc.constantFrom(0, 0, 1, 5, 50),
      place: fc.option(
        fc.record({ lat: fc.double({ min: 41.5, max: 42.2, noNaN: true }), lng: fc.double({ min: -88, max: -87.3, noNaN: true }) }),
      ),
    })
    .map((r): Case => ({
      id: `d${String(i).padStart(3, '0')}`,
      title: r.title,
      category: r.category,
      region: r.region,
      price: r.price,
      value: r.value,
      state: r.state,
      startAt: NOW + r.start * HOUR,
      endAt: NOW + (r.start + r.hours) * HOUR,
      total: r.total,
      lat: r.place?.lat ?? null,
      lng: r.place?.lng ?? null,
    }));

const catalogueArb = fc.integer({ min: 0, max: 60 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => caseArb(i))));

const queryArb = fc.record({
  categories: fc.option(fc.subarray(CATEGORIES, { minLength: 1 })),
  regions: fc.option(fc.subarray(REGIONS, { minLength: 1 })),
  price: fc.option(
    fc.tuple(
      fc.constantFrom('<', '<=', '=', '>=', '>'),
      fc.integer({ min: 0, max: 20 }).map((n) => n * 500),
    ),
  ),
  priceIn: fc.option(
    fc.uniqueArray(
      fc.integer({ min: 0, max: 20 }).map((n) => n * 500),
      { minLength: 1, maxLength: 3 },
    ),
  ),
  soldOut: fc.option(fc.boolean()),
  near: fc.option(
    fc.tuple(
      fc.double({ min: 41.6, max: 42.1, noNaN: true }),
      fc.double({ min: -87.9, max: -87.4, noNaN: true }),
      fc.integer({ min: 1, max: 30 }),
    ),
  ),
  sort: fc.tuple(fc.constantFrom(...SORTABLE), fc.constantFrom('asc', 'desc')),
  perPage: fc.integer({ min: 1, max: 25 }),
  page: fc.integer({ min: 1, max: 4 }),
});

function miles(lat1: number, lng1: number, lat2: number, lng2: number) {
  const r = (x: number) => (x * Math.PI) / 180;
  const h = Math.sin(r(lat2 - lat1) / 2) ** 2 + Math.cos(r(lat1)) * Math.cos(r(lat2)) * Math.sin(r(lng2 - lng1) / 2) ** 2;
  return 2 * 3963.2 * Math.asin(Math.sqrt(h));
}

const terms = (c: Case): DealTerms => ({
  id: c.id,
  title: c.title,
  type: 'daily-deal',
  category: c.category,
  current_price: c.price,
  value: c.value,
  start_at: new Date(c.startAt).toISOString(),
  end_at: new Date(c.endAt).toISOString(),
  fulfillment_method: 'printed',
  region_id: c.region,
  locations: c.lat === null ? [] : [{ address: { latitude: c.lat, longitude: c.lng! } }],
});

const view = (c: Case, i: number): DealDetails => ({
  _id: c.id,
  _pos: String(i + 1).padStart(20, '0'),
  deal: terms(c),
  state: c.state,
  inventory: { total: c.total, sold: 0, held: {} },
  ...searchFields(terms(c), { total: c.total, sold: 0, held: {} }, 0),
});

describe('v3 deal queries on the embedded view store (property)', () => {
  const dir = tempDir('discovery-prop');
  let views: MingoViewStore;
  let n = 0;
  beforeAll(() => (views = new MingoViewStore(dir.path)));
  afterAll(async () => {
    await views.close();
    dir.remove();
  });

  it('answer exactly what a plain filter and sort over the same deals answers', async () => {
    await fc.assert(
      fc.asyncProperty(catalogueArb, queryArb, async (catalogue, q) => {
        const collection = `${DEAL_DETAILS}_${++n}`;
        await views.define(collection, dealDetailsProjection.indexes);
        if (catalogue.length) await views.writer(collection).commit(catalogue.map(view), String(catalogue.length).padStart(20, '0'));

        const conditions: string[] = [];
        if (q.categories) conditions.push(`category[${q.categories.join(',')}]`);
        if (q.regions) conditions.push(`region[${q.regions.join(',')}]`);
        if (q.price) conditions.push(`price${q.price[0]}${q.price[1]}`);
        if (q.priceIn) conditions.push(`price[${q.priceIn.join(',')}]`);
        if (q.soldOut !== null) conditions.push(`sold_out[${q.soldOut}]`);
        if (q.near) conditions.push(`lat_long[${q.near[0]},${q.near[1]},${q.near[2]}]`);
        const parsed = parseV3Query({ filter: conditions.join(','), sort: `${q.sort[0]}(${q.sort[1]})` });
        const filter = v3Filter(parsed.conditions, NOW, []);
        // id ties are broken by id itself: `{ _id: -1, _id: 1 }` would silently become ascending.
        const order = Object.fromEntries(parsed.sort.map((k) => [k.field, k.direction])) as Record<string, 1 | -1>;
        const sort = '_id' in order ? order : { ...order, _id: 1 as const };
        const skip = (q.page - 1) * q.perPage;
        const got = (await views.find<DealDetails>(collection, filter, { sort, skip, limit: q.perPage })).map((d) => d._id);

        const key = (c: Case): number | string =>
          ({ id: c.id, title: c.title, start_at: c.startAt, end_at: c.endAt, price: c.price, value: c.value, num_left: c.total })[
            q.sort[0]
          ];
        const sign = q.sort[1] === 'asc' ? 1 : -1;
        const compare = (a: Case, b: Case) => {
          const [x, y] = [key(a), key(b)];
          return (x < y ? -1 : x > y ? 1 : 0) * sign || (a.id < b.id ? -1 : 1);
        };
        const expected = catalogue
          .filter((c) => c.endAt > NOW && (c.state === 'in-flight' || (c.state === 'approved' && c.startAt <= NOW)))
          .filter((c) => !q.categories || q.categories.includes(c.category))
          .filter((c) => !q.regions || q.regions.includes(c.region))
          .filter(
            (c) =>
              !q.price ||
              {
                '<': c.price < q.price[1],
                '<=': c.price <= q.price[1],
                '=': c.price === q.price[1],
                '>=': c.price >= q.price[1],
                '>': c.price > q.price[1],
              }[q.price[0]],
          )
          .filter((c) => !q.priceIn || q.priceIn.includes(c.price))
          .filter((c) => q.soldOut === null || (c.total === 0) === q.soldOut)
          .filter((c) => !q.near || (c.lat !== null && miles(q.near[0], q.near[1], c.lat, c.lng!) <= q.near[2]))
          .sort(compare)
          .slice(skip, skip + q.perPage)
          .map((c) => c.id);
        expect(got).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });
});
