import { MingoViewStore } from '@deals/adapters/view-store/mingo/mingo-view-store.adapter';
import type { DealTerms } from '@deals/catalog/domain/deal/deal-terms';
import {
  DEAL_DETAILS,
  DealDetails,
  dealDetailsProjection,
  searchFields,
} from '@deals/catalog/projections/deal-details/deal-details.projection';
import { REGIONS, regionsProjection } from '@deals/catalog/projections/regions/regions.projection';
import { DealSearch } from '@deals/catalog/queries/deal-search';
import { parseV3Query, V3_SORTS } from '@deals/catalog/queries/v3-query';
import { v3Filter } from '@deals/catalog/queries/v3-filter';
import { tempDir } from '../support/temp-dir';

/**
 * The deal-discovery property test's counterexample (seed -1686681785): 44 deals alike but for
 * their id, sorted by `id(desc)`, one per page. Through the service's own page query (which adds
 * `_id` ascending only when the sort does not name `_id`), every sortable attribute of the property
 * test, either way, pages as a plain sort by that attribute then id does.
 */
const NOW = Date.parse('2026-06-15T12:00:00Z');
const HOUR = 3_600_000;
const ATTRIBUTES = ['id', 'title', 'start_at', 'end_at', 'price', 'value', 'num_left'] as const;
const PAGES: Array<[number, number]> = [
  [1, 1],
  [1, 3],
  [2, 1],
  [3, 5],
  [9, 5],
  [1, 25],
  [2, 25],
];

const terms = (id: string): DealTerms => ({
  id,
  title: 'Spa',
  type: 'daily-deal',
  category: 'Food & Drink',
  current_price: 0,
  value: 1000,
  start_at: new Date(NOW).toISOString(),
  end_at: new Date(NOW + HOUR).toISOString(),
  fulfillment_method: 'printed',
  region_id: 'chicago',
  locations: [],
});
const inventory = { total: 0, sold: 0, held: {} };
const ids = Array.from({ length: 44 }, (_, i) => `d${String(i).padStart(3, '0')}`);
const view = (id: string, i: number): DealDetails => ({
  _id: id,
  _pos: String(i + 1).padStart(20, '0'),
  deal: terms(id),
  state: 'in-flight',
  inventory,
  ...searchFields(terms(id), inventory, NOW),
});

describe('deal discovery: 44 identical deals sorted by id', () => {
  const dir = tempDir('discovery-id-sort');
  let views: MingoViewStore;
  let search: DealSearch;
  beforeAll(async () => {
    views = new MingoViewStore(dir.path);
    await views.define(DEAL_DETAILS, dealDetailsProjection.indexes);
    await views.define(REGIONS, regionsProjection.indexes);
    await views.writer(DEAL_DETAILS).commit(ids.map(view), String(ids.length).padStart(20, '0'));
    search = new DealSearch(views);
  });
  afterAll(async () => {
    await views.close();
    dir.remove();
  });

  const page = async (attribute: string, direction: 'asc' | 'desc', number: number, perPage: number) => {
    const query = parseV3Query({ sort: `${attribute}(${direction})` });
    const sort = Object.fromEntries(query.sort.map((k) => [k.field, k.direction]));
    const found = await search.page(v3Filter(query.conditions, NOW, []), sort, (number - 1) * perPage, perPage);
    return found.deals.map((d) => d._id);
  };

  it('answers d043 for sort=id(desc), per_page=1, page=1', async () => {
    expect(await page('id', 'desc', 1, 1)).toEqual(['d043']);
  });

  it('pages every sortable attribute, ascending and descending, ties broken by id', async () => {
    for (const attribute of ATTRIBUTES) {
      for (const direction of ['asc', 'desc'] as const) {
        // Every deal ties on every other attribute: the order is the ids', reversed only when sorting by id descending.
        const order = attribute === 'id' && direction === 'desc' ? [...ids].reverse() : ids;
        for (const [number, perPage] of PAGES) {
          const skip = (number - 1) * perPage;
          expect({
            attribute,
            field: V3_SORTS[attribute],
            direction,
            number,
            perPage,
            got: await page(attribute, direction, number, perPage),
          }).toEqual({ attribute, field: V3_SORTS[attribute], direction, number, perPage, got: order.slice(skip, skip + perPage) });
        }
      }
    }
  });
});
