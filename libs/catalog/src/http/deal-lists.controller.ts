import { Clock, NotFound, SortSpec, ViewFilter } from '@deals/kernel';
import { Caller, CurrentCaller, CalledBy, PARTNERS } from '@deals/wire';
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
import { CatalogQueries } from '../queries/catalog.queries';
import { UserDealPreference, UserDealPreferences } from '../queries/user-deal-preferences.port';

/** Lists in the v1 shape are ordered by start, earliest first (docs/decisions.md). */
const BY_START: SortSpec = { startAt: 1 };

/** GET /v1/deals, GET /deals/locate, GET /regions/:place/deals. */
@ApiTags('catalog')
@Controller()
export class DealListsController {
  constructor(
    private readonly search: DealSearch,
    private readonly regions: RegionResolver,
    private readonly bodies: DealV1Bodies,
    private readonly clock: Clock,
    private readonly catalog: CatalogQueries,
    private readonly preferences: UserDealPreferences,
  ) {}

  @Get('v1/deals')
  @CalledBy(...PARTNERS, 'auditor')
  @ApiOperation({
    summary: 'List deals (v1)',
    description:
      'The parameters come in the query string or as a JSON body on the GET, combined with AND; ordered by start, earliest first.',
  })
  @ApiAnswer(DealListAnswer, { errors: [404, 422] })
  @ApiRequest({ query: V1DealListParams })
  async list(@RequestParameters() params: V1DealListParams, @Res({ passthrough: true }) reply: FastifyReply) {
    const { paging, query: q } = params;
    let regionIds: string[] | null = null;
    if (q.region !== undefined) {
      const region = await this.regions.resolve(q.region);
      if (!region) throw new NotFound('region not found');
      regionIds = [region._id];
    }
    return this.answer(v1Filter(q, this.clock.now().getTime(), regionIds), paging, reply);
  }

  @Get('deals/locate')
  @CalledBy(...PARTNERS, 'auditor')
  @ApiOperation({
    summary: 'Deals on sale around a point',
    description: 'Latitude, longitude and radius (miles), all required, in the query or a JSON body; ordered by start, earliest first.',
  })
  @ApiAnswer(DealListAnswer, { errors: [422] })
  @ApiRequest({ query: LocateParams })
  async locate(@RequestParameters() params: LocateParams, @Res({ passthrough: true }) reply: FastifyReply) {
    const { paging, within } = params;
    return this.answer(mergeFilters([onSaleFilter(this.clock.now().getTime()), within]), paging, reply);
  }

  @Get('regions/:place/deals')
  @CalledBy(...PARTNERS, 'auditor')
  @ApiOperation({
    summary: "A region's deals",
    description:
      'The place is a region slug, a zip code or a spelled-out city,ST; filter words in_flight, offer, current, not_bg; ' +
      'parameters in the query or a JSON body; ordered by start, earliest first. With `user_id`: only deals that user may still buy ' +
      '(not those whose max_per_user it has bought, nor card-linked deals whose link it has fulfilled), its saved deals first, ' +
      'and each purchasable_number counting what it bought.',
  })
  @ApiAnswer(DealListAnswer, { errors: [404, 422] })
  @ApiRequest({ query: RegionalParams })
  async regional(
    @Param('place') place: string,
    @RequestParameters() params: RegionalParams,
    @CurrentCaller() caller: Caller,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { paging, words, userId } = params;
    const region = await this.regions.resolve(place);
    if (!region) throw new NotFound('region not found');
    const filter = regionalFilter(words, region._id, this.clock.now().getTime());
    if (userId === undefined) return this.answer(filter, paging, reply);
    const preference = await this.preferences.of(caller.partnerId, userId);
    if (!preference) throw new NotFound('user not found');
    return this.answerForUser(filter, preference, paging, reply);
  }

  /**
   * A regional list for one user (docs/decisions.md "A regional list for a user"): without the deals it
   * can no longer buy, its saved deals first (each part ordered by start), paged over the whole.
   */
  private async answerForUser(filter: ViewFilter, preference: UserDealPreference, paging: Paging, reply: FastifyReply): Promise<unknown> {
    const boughtDeals = await Promise.all([...preference.unitsBought.keys()].map((id) => this.catalog.deal(id)));
    const usedUp = [
      ...boughtDeals
        .filter((view) => {
          const limit = view?.deal?.max_per_user;
          return typeof limit === 'number' && (preference.unitsBought.get(view!._id) ?? 0) >= limit;
        })
        .map((view) => view!._id),
      ...preference.fulfilledCardLinkDealIds,
    ];
    const saved = preference.savedDealIds.filter((id) => !usedUp.includes(id));
    const savedFilter = mergeFilters([filter, { _id: { $in: saved } }]);
    const restFilter = mergeFilters([filter, { _id: { $nin: [...saved, ...usedUp] } }]);
    const savedCount = saved.length ? await this.search.count(savedFilter) : 0;
    if (paging.count) return { status: 'success', count: savedCount + (await this.search.count(restFilter)) };
    const first =
      saved.length && paging.skip < savedCount ? await this.search.page(savedFilter, BY_START, paging.skip, paging.perPage) : null;
    const taken = first?.deals.length ?? 0;
    const rest =
      taken < paging.perPage
        ? await this.search.page(restFilter, BY_START, Math.max(0, paging.skip - savedCount), paging.perPage - taken)
        : null;
    const deals = [...(first?.deals ?? []), ...(rest?.deals ?? [])];
    const regions = new Map([...(first?.regions ?? []), ...(rest?.regions ?? [])]);
    void reply.type('application/json; charset=utf-8');
    return this.bodies.list(deals, regions, this.clock.now(), preference.unitsBought);
  }

  private async answer(filter: ViewFilter, paging: Paging, reply: FastifyReply): Promise<unknown> {
    if (paging.count) return { status: 'success', count: await this.search.count(filter) };
    const page = await this.search.page(filter, BY_START, paging.skip, paging.perPage);
    void reply.type('application/json; charset=utf-8');
    return this.bodies.list(page.deals, page.regions, this.clock.now());
  }
}
