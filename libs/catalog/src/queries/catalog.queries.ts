import { ViewStore } from '@deals/kernel';
import { onSaleFilter } from './deal-filters';
import { mergeFilters } from './merge-filters';
import { BACKGROUND_TAG } from './regional-filter';
import { Injectable } from '@nestjs/common';
import { DEAL_DETAILS, DealDetails } from '../projections/deal-details/deal-details.projection';
import { REGIONS, RegionView } from '../projections/regions/regions.projection';

/** Reads of the catalogue views; every deal and region answer comes from here. */
@Injectable()
export class CatalogQueries {
  constructor(private readonly views: ViewStore) {}

  async deal(dealId: string): Promise<DealDetails | null> {
    const view = await this.views.findById<DealDetails>(DEAL_DETAILS, dealId);
    return view?.deal ? view : null;
  }

  /** Ids of the deals with units in open holds (lapsed ones too, until their release is recorded). */
  async dealsWithOpenHolds(): Promise<string[]> {
    const deals = await this.views.find<DealDetails>(DEAL_DETAILS, { 'inventory.held': { $nin: [null, {}] } });
    return deals.map((view) => view._id);
  }

  /** A region's deals on sale at `now` (not background ones), by start, earliest first: what its daily email shows. */
  onSaleInRegion(regionId: string, now: number, limit: number): Promise<DealDetails[]> {
    return this.views.find<DealDetails>(DEAL_DETAILS, mergeFilters([{ regionId }, onSaleFilter(now), { tags: { $ne: BACKGROUND_TAG } }]), {
      sort: { startAt: 1, _id: 1 },
      limit,
    });
  }

  region(regionId: string): Promise<RegionView | null> {
    return this.views.findById<RegionView>(REGIONS, regionId);
  }

  regions(): Promise<RegionView[]> {
    return this.views.find<RegionView>(REGIONS, {}, { sort: { 'region.name': 1, _id: 1 } });
  }
}
