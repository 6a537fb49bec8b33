import { ValidationFailed } from '@deals/kernel';
import { documented, pagingIssues, parsedBy, requestDto, withPaging } from '@deals/wire';
import { z } from 'zod';
import { parseLocate } from '../queries/locate-query';
import { parseRegionalFilter, REGIONAL_WORDS } from '../queries/regional-filter';
import { parseV1DealQuery } from '../queries/v1-query';
import { parseV3Query } from '../queries/v3-query';

/**
 * The catalogue's list parameters. Each is documented here; the interface's own grammars (the v1
 * parameters, the v3 `fields`/`sort`/`filter` language, the regional filter words) are read by
 * their parsers inside the schema, so a controller receives parsed values and paging.
 */

/** GET /v1/deals parameters (query string or a JSON body on the GET). */
export const v1DealListParams = withPaging(
  {
    slug: documented('string', 'a deal slug'),
    marketplace_slug: documented('string', 'a marketplace slug'),
    title: documented('string', 'words of the title'),
    state: documented('string', 'a workflow state', 'in-flight'),
    show_all: documented('boolean', 'true: deals in every state'),
    category: documented('string', 'a category'),
    subcategory: documented('string', 'a subcategory'),
    merchant: documented('string', 'a merchant name'),
    price_min: documented('integer', 'lowest current price, cents'),
    price_max: documented('integer', 'highest current price, cents'),
    region: documented('string', 'a region slug, city,ST, zip code or IP address', 'chicago'),
    latitude: documented('number', 'with longitude: deals near this point'),
    longitude: documented('number', 'with latitude'),
    radius: documented('number', 'miles around latitude, longitude (default 10)'),
    user: documented('string', 'with card_links_redeemed=false and a region: that user’s card-linked deals left out'),
    suppliers: documented('string', 'supplier ids, comma-separated (or a JSON list)'),
    vendors: documented('string', 'vendor ids, comma-separated (or a JSON list)'),
    num_left: documented('integer', 'at least this many units left'),
    exclude_soldout: documented('boolean', 'true: no sold-out deals'),
    runs_min: documented('string', 'running on or after this date or instant'),
    runs_max: documented('string', 'running on or before this date or instant'),
    card_links_redeemed: documented('boolean', 'false only: no card-linked deals'),
  },
  'deal',
).transform((params, ctx) => {
  const { paging, ...rest } = params;
  return { paging, query: parsedBy(ctx, () => parseV1DealQuery(rest as Record<string, unknown>)) };
});
export class V1DealListParams extends requestDto(v1DealListParams) {}

/** GET /deals/locate parameters. */
export const locateParams = withPaging(
  {
    latitude: documented('number', 'from -90 to 90', 41.88),
    longitude: documented('number', 'from -180 to 180', -87.63),
    radius: documented('number', 'miles, above 0 and at most 12500', 10),
  },
  'deal',
)
  .transform((params, ctx) => {
    const { paging, ...rest } = params;
    return { paging, ...parsedBy(ctx, () => parseLocate(rest as Record<string, unknown>)) };
  })
  // The parser refuses each one left out with its own message: described as required here.
  .meta({ 'x-resource': 'deal', required: ['latitude', 'longitude', 'radius'] });
export class LocateParams extends requestDto(locateParams) {}

/** The regional list parameters. */
export const regionalParams = withPaging(
  {
    filter: documented('string', `comma-separated words from ${REGIONAL_WORDS.join(', ')} (default in_flight,current,not_bg)`, 'in_flight'),
    user_id: documented(
      'string',
      "a user of the partner: the deals it may still buy, its saved deals first, purchasable_number counting what it bought (404 for another partner's or an unknown user)",
    ),
  },
  'deal',
).transform((params, ctx) => {
  const { paging, ...rest } = params;
  const words = parsedBy(ctx, () => parseRegionalFilter(rest as Record<string, unknown>));
  const userId = typeof rest.user_id === 'string' && rest.user_id !== '' ? rest.user_id : undefined;
  return { paging, words, userId };
});
export class RegionalParams extends requestDto(regionalParams) {}

/** GET /api/v3/deals keywords, and `page`/`per_page` (this list has no `count`). */
export const v3DealListQuery = z
  .object({
    fields: documented('string', 'attributes to return, comma-separated; sub-fields in brackets', 'id,title,images[small]'),
    sort: documented('string', 'attribute(asc|desc); default end_at(desc)', 'start_at(desc)'),
    filter: documented(
      'string',
      'conditions ANDed: category[..], subcategory[..], price<N, price[N,M], region[..], region_city[..], lat_long[..], sold_out[..]',
      'price<5000,sold_out[false]',
    ),
    page: documented('integer', 'page number from 1 (default 1)'),
    per_page: documented('integer', 'list size, 1 to 1000 (default 100)'),
  })
  .meta({ 'x-resource': 'deal' })
  .transform((params, ctx) => {
    const { fields, sort, filter, page, per_page } = params;
    const read = pagingIssues({ page, per_page }, 'deal');
    // Paging is read first: a bad page is told alone, as the other lists do.
    if (!read.paging)
      return parsedBy(ctx, () => {
        throw new ValidationFailed(read.issues);
      });
    const paging = read.paging;
    return {
      paging,
      // The keywords as sent, for the next page's address.
      sent: { fields, sort, filter } as Record<string, unknown>,
      query: parsedBy(ctx, () => parseV3Query({ fields, sort, filter })),
    };
  });
export class V3DealListQuery extends requestDto(v3DealListQuery) {}
