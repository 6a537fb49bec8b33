import { SortSpec, ViewFilter, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { DEAL_DETAILS, DealDetails } from '../projections/deal-details/deal-details.projection';
import { cityKey, REGIONS, RegionView } from '../projections/regions/regions.projection';

export interface DealPage {
  deals: DealDetails[];
  /** Whether more deals match after this page. */
  more: boolean;
  regions: Map<string, RegionView>;
}

/** Lists of deals from the deal view, with the regions they name, one query each. */
@Injectable()
export class DealSearch {
  constructor(private readonly views: ViewStore) {}

  /** Ids of the regions of the spelled-out cities given (none for a city no region names). */
  async regionIdsByCity(places: Array<{ city: string; state: string }>): Promise<string[]> {
    const keys = places.map((p) => cityKey(p.city, p.state));
    return (await this.views.find<RegionView>(REGIONS, { cityKey: { $in: keys } })).map((r) => r._id);
  }

  /** One page, sorted with `_id` as the last key so that pages never overlap. */
  async page(filter: ViewFilter, sort: SortSpec, skip: number, limit: number): Promise<DealPage> {
    const order: SortSpec = '_id' in sort ? sort : { ...sort, _id: 1 };
    const found = await this.views.find<DealDetails>(DEAL_DETAILS, filter, { sort: order, skip, limit: limit + 1 });
    const deals = found.slice(0, limit);
    const regionIds = [...new Set(deals.map((d) => d.regionId).filter((id): id is string => id !== null))];
    const regions = regionIds.length ? await this.views.find<RegionView>(REGIONS, { _id: { $in: regionIds } }) : [];
    return { deals, more: found.length > limit, regions: new Map(regions.map((r) => [r._id, r])) };
  }

  count(filter: ViewFilter): Promise<number> {
    return this.views.count(DEAL_DETAILS, filter);
  }
}
