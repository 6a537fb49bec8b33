import { Clock, NotFound, SortSpec, ViewFilter } from '@deals/kernel';
import { ApiAnswer, ApiRequest, Paging, RequestParameters } from '@deals/wire';
import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { onSaleFilter } from '../queries/deal-filters';
import { DealSearch } from '../queries/deal-search';
import { mergeFilters } from '../queries/merge-filters';
import { RegionResolver } from '../queries/region-resolver';
import { regionalFilter } from '../queries/regional-filter';
import { v1Filter } from '../queries/v1-query';
import { DealListAnswer } from './catalog.answers';
import { LocateParams, RegionalParams, V1DealListParams } from './catalog.request';
import { DealV1Bodies } from './deal-v1-bodies';

/** Lists in the v1 shape are ordered by start, earliest first (architecture.md part 6). */
const BY_START: SortSpec = { startAt: 1 };

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
  @ApiRequest({ query: V1DealListParams })
  async list(@RequestParameters() params: V1DealListParams, @Res({ passthrough: true }) reply: FastifyReply) {
    const { paging, query: q } = params;
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
  @ApiRequest({ query: LocateParams })
  async locate(@RequestParameters() params: LocateParams, @Res({ passthrough: true }) reply: FastifyReply) {
    const { paging, within } = params;
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
  @ApiRequest({ query: RegionalParams })
  async regional(
    @Param('place') place: string,
    @RequestParameters() params: RegionalParams,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { paging, words } = params;
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
