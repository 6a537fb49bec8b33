import type { ViewFilter } from '@deals/kernel';
import { mergeFilters } from './merge-filters';
import { onSaleFilter, withinMiles } from './deal-filters';
import type { V3Condition } from './v3-query';

const OPERATORS = { '<': '$lt', '<=': '$lte', '>': '$gt', '>=': '$gte' } as const;

/**
 * The view filter of a v3 deal list: deals on sale at `now` meeting every condition.
 * `cityRegions` gives, for each region_city condition in order, the ids of the regions it names.
 */
export function v3Filter(conditions: V3Condition[], now: number, cityRegions: string[][]): ViewFilter {
  const parts: ViewFilter[] = [onSaleFilter(now)];
  let city = 0;
  for (const c of conditions) {
    switch (c.name) {
      case 'category':
        parts.push({ categoryKey: { $in: c.values.map((v) => v.toLowerCase()) } });
        break;
      case 'subcategory':
        parts.push({ subcategoryKey: { $in: c.values.map((v) => v.toLowerCase()) } });
        break;
      case 'region':
        parts.push({ regionId: { $in: c.values } });
        break;
      case 'region_city':
        parts.push({ regionId: { $in: cityRegions[city++] ?? [] } });
        break;
      case 'price':
        parts.push({ price: c.operator === '=' ? { $eq: c.cents } : { [OPERATORS[c.operator]]: c.cents } });
        break;
      case 'price_in':
        parts.push({ price: { $in: c.cents } });
        break;
      case 'lat_long':
        parts.push(withinMiles(c.latitude, c.longitude, c.miles));
        break;
      case 'sold_out':
        parts.push({ soldOut: c.value });
        break;
    }
  }
  return mergeFilters(parts);
}
