import { ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { Geography } from '../geography/geography';
import { cityKey, REGIONS, RegionView } from '../projections/regions/regions.projection';

/** How far from a place its nearest region may be and still serve it, in miles. */
export const REGION_REACH_MILES = { zip: 60, ip: 100 } as const;

/**
 * Which region a place names: a region slug, a spelled-out `city,ST`, a US zip code (a region that
 * lists it, else the nearest active region), or an IP address (the nearest active region to where
 * GeoIP puts it). Null when nothing serves the place.
 */
@Injectable()
export class RegionResolver {
  constructor(
    private readonly views: ViewStore,
    private readonly geography: Geography,
  ) {}

  async resolve(place: string): Promise<RegionView | null> {
    const text = place.trim();
    if (text === '') return null;
    const byId = await this.views.findById<RegionView>(REGIONS, text);
    if (byId) return byId;
    if (this.geography.isZip(text)) return this.byZip(text);
    if (this.geography.isIp(text)) return this.nearest(this.geography.ipPoint(text), REGION_REACH_MILES.ip);
    const comma = text.lastIndexOf(',');
    if (comma > 0) {
      return this.views.findOne<RegionView>(REGIONS, { cityKey: cityKey(text.slice(0, comma), text.slice(comma + 1)) });
    }
    return null;
  }

  private async byZip(zip: string): Promise<RegionView | null> {
    const listed = await this.views.findOne<RegionView>(REGIONS, { 'region.postal_codes': zip });
    return listed ?? this.nearest(this.geography.zipPoint(zip), REGION_REACH_MILES.zip);
  }

  private async nearest(point: { latitude: number; longitude: number } | null, miles: number): Promise<RegionView | null> {
    if (!point) return null;
    const active = await this.views.find<RegionView>(REGIONS, { 'region.active': true });
    const candidates = active.map((view) => ({ view, latitude: view.region.latitude, longitude: view.region.longitude }));
    return this.geography.nearest(point, candidates, miles)?.candidate.view ?? null;
  }
}
