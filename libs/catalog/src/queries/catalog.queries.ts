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

  /** Every hold the deals' inventories hold open (lapsed ones too, until their release is recorded). */
  async openHolds(): Promise<Array<{ dealId: string; holdId: string; quantity: number; expiresAt: number }>> {
    const deals = await this.views.find<DealDetails>(DEAL_DETAILS, { 'inventory.holds': { $nin: [null, {}] } });
    return deals.flatMap((view) => Object.entries(view.inventory.holds ?? {}).map(([holdId, hold]) => ({ dealId: view._id, holdId, ...hold })));
  }

  region(regionId: string): Promise<RegionView | null> {
    return this.views.findById<RegionView>(REGIONS, regionId);
  }

  regions(): Promise<RegionView[]> {
    return this.views.find<RegionView>(REGIONS, {}, { sort: { 'region.name': 1, _id: 1 } });
  }
}
