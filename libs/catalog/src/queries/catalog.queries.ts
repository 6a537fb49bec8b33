import { ViewStore } from '@deals/kernel';
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

  region(regionId: string): Promise<RegionView | null> {
    return this.views.findById<RegionView>(REGIONS, regionId);
  }

  regions(): Promise<RegionView[]> {
    return this.views.find<RegionView>(REGIONS, {}, { sort: { 'region.name': 1, _id: 1 } });
  }
}
