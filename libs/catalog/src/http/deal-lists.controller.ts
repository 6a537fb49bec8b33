import { Clock, NotFound, SortSpec, ValidationFailed, ViewFilter } from '@deals/kernel';
import { Paging, parsePaging } from '@deals/wire';
import { Body, Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAnswer } from '@deals/wire';
import { DealListAnswer } from './catalog.answers';
import type { FastifyReply } from 'fastify';
import { onSaleFilter } from '../queries/deal-filters';
import { DealSearch } from '../queries/deal-search';
import { mergeFilters } from '../queries/merge-filters';
import { RegionResolver } from '../queries/region-resolver';
import { parseRegionalFilter, regionalFilter } from '../queries/regional-filter';
import { parseV1DealQuery, v1Filter } from '../queries/v1-query';
import { parseLocate } from '../queries/locate-query';
import { DealV1Bodies } from './deal-v1-bodies';

/** Lists in the v1 shape are ordered by start, earliest first (architecture.md part 6). */
const BY_START: SortSpec = { startAt: 1 };

/** Parameters from the query string and, for GET calls that carry them so, a JSON body (part 4). */
function parameters(query: Record<string, unknown>, body: unknown): Record<string, unknown> {
  if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
    throw new ValidationFailed([{ type: 'invalid', resource: 'request', field: 'body', message: 'must be a JSON object of parameters' }]);
  }
  const { api_key: _key, access_token: _token, ...rest } = { ...query, ...(body as Record<string, unknown> | undefined) };
  return rest;
}

/** GET /v1/deals (4.3), GET /deals/locate (4.3), GET /regions/:place/deals (4.4). */
@ApiTags('catalog')
@Controller()
export class DealListsController {
  constructor(
    private readonly search: DealSearch,
    private readonly regions: RegionResolver,
    private readonly bodies: DealV1Bodies,
    private readonly clock: Clock,
  ) {}

  @Get('v1/deals')
  @ApiOperation({
    summary: 'List deals (v1)',
    description:
      'Part 4.3: the parameters come in the query string or as a JSON body on the GET, combined with AND; ordered by start, earliest first.',
  })
  @ApiAnswer(DealListAnswer, { errors: [404, 422] })
  async list(@Query() query: Record<string, unknown>, @Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply) {
    const params = parameters(query, body);
    const paging = parsePaging(params, 'deal');
    const q = parseV1DealQuery(params);
    let regionIds: string[] | null = null;
    if (q.region !== undefined) {
      const region = await this.regions.resolve(q.region);
      if (!region) throw new NotFound(`region ${q.region} not found`);
      regionIds = [region._id];
    }
    return this.answer(v1Filter(q, this.clock.now().getTime(), regionIds), paging, reply);
  }

  @Get('deals/locate')
  @ApiOperation({
    summary: 'Deals on sale around a point',
    description:
      'Part 4.3: latitude, longitude and radius (miles), all required, in the query or a JSON body; ordered by start, earliest first.',
  })
  @ApiAnswer(DealListAnswer, { errors: [422] })
  async locate(@Query() query: Record<string, unknown>, @Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply) {
    const params = parameters(query, body);
    const paging = parsePaging(params, 'deal');
    const { within } = parseLocate(params);
    return this.answer(mergeFilters([onSaleFilter(this.clock.now().getTime()), within]), paging, reply);
  }

  @Get('regions/:place/deals')
  @ApiOperation({
    summary: "A region's deals",
    description:
      'Part 4.4: the place is a region slug, a zip code or a spelled-out city,ST; filter words in_flight, offer, current, not_bg; ' +
      'parameters in the query or a JSON body; ordered by start, earliest first.',
  })
  @ApiAnswer(DealListAnswer, { errors: [404, 422] })
  async regional(
    @Param('place') place: string,
    @Query() query: Record<string, unknown>,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const params = parameters(query, body);
    const paging = parsePaging(params, 'deal');
    const words = parseRegionalFilter(params);
    const region = await this.regions.resolve(place);
    if (!region) throw new NotFound(`region ${place} not found`);
    return this.answer(regionalFilter(words, region._id, this.clock.now().getTime()), paging, reply);
  }

  private async answer(filter: ViewFilter, paging: Paging, reply: FastifyReply): Promise<unknown> {
    if (paging.count) return { status: 'success', count: await this.search.count(filter) };
    const page = await this.search.page(filter, BY_START, paging.skip, paging.perPage);
    void reply.type('application/json; charset=utf-8');
    return this.bodies.list(page.deals, page.regions, this.clock.now());
  }
}
