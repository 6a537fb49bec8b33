import { Clock } from '@deals/kernel';
import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAnswer, ApiRequest, CalledBy, PARTNERS } from '@deals/wire';
import { V3DealListQuery } from './catalog.request';
import { DealV3ListAnswer } from './catalog.answers';
import type { FastifyReply } from 'fastify';
import { CatalogLinks } from '../queries/catalog-links';
import { DealSearch } from '../queries/deal-search';
import { v3Filter } from '../queries/v3-filter';
import { DealV3Bodies } from './deal-v3-bodies';

/** GET /api/v3/deals: in-flight deals by the v3 query language, paged. */
@ApiTags('catalog')
@Controller('api/v3/deals')
export class DealsV3Controller {
  constructor(
    private readonly search: DealSearch,
    private readonly clock: Clock,
    private readonly links: CatalogLinks,
    private readonly bodies: DealV3Bodies,
  ) {}

  @Get()
  @CalledBy(...PARTNERS, 'auditor')
  @ApiOperation({
    summary: 'List in-flight deals (v3)',
    description:
      '`fields` (sub-fields in brackets), `sort=attribute(asc|desc)`, `filter` (category, subcategory, price, region, ' +
      'region_city, lat_long, sold_out, ANDed), `page`/`per_page`; `next_page` carries the same query. HTTP basic credentials.',
  })
  @ApiAnswer(DealV3ListAnswer, { errors: [422] })
  @ApiRequest({ query: V3DealListQuery })
  async list(@Query() params: V3DealListQuery, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    const { paging, query, sent } = params;
    const now = this.clock.now();
    const cities = await Promise.all(
      query.conditions.flatMap((c) => (c.name === 'region_city' ? [this.search.regionIdsByCity(c.places)] : [])),
    );
    const filter = v3Filter(query.conditions, now.getTime(), cities);
    const sort = Object.fromEntries(query.sort.map((k) => [k.field, k.direction]));
    const page = await this.search.page(filter, sort, paging.skip, paging.perPage);
    const next = page.more ? this.nextPage(sent, paging.page + 1, paging.perPage) : null;
    void reply.type('application/json; charset=utf-8');
    return this.bodies.list(page.deals, page.regions, now, query.fields, String(sent.fields ?? ''), next);
  }

  /** The same fields, filter and sort, with the next page number (`next_page`). */
  private nextPage(params: Record<string, unknown>, page: number, perPage: number): string {
    const query = new URLSearchParams();
    for (const key of ['fields', 'filter', 'sort']) if (typeof params[key] === 'string') query.set(key, params[key] as string);
    query.set('page', String(page));
    query.set('per_page', String(perPage));
    return `${this.links.apiBaseUrl}/api/v3/deals?${query.toString()}`;
  }
}
