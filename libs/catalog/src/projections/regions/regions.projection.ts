import { defineProjection, RecordedEvent, ViewDocument } from '@deals/kernel';
import type { RegionEvent, RegionTerms } from '../../domain/region/region.events';

/** "Which regions are there, and which region is this city or zip code?" */
export interface RegionView extends ViewDocument {
  region: RegionTerms;
  /** `city,st` in lower case, for lookups by spelled-out city and state. */
  cityKey: string;
}

export const REGIONS = 'regions';

/** `city,st` in lower case with single spaces; a `%20` written by a caller that encoded twice is a space. */
export const cityKey = (city: string, state: string) =>
  `${city.replace(/%20/gi, ' ').trim().toLowerCase().replace(/\s+/g, ' ')},${state.replace(/%20/gi, ' ').trim().toLowerCase()}`;

export const regionsProjection = defineProjection<RegionView>({
  name: REGIONS,
  handles: ['RegionListed', 'RegionRevised'],
  // Small, read by every regional list and by geo queries: held in memory by the embedded store.
  keepInMemory: true,
  indexes: [{ keys: { cityKey: 1 } }, { keys: { 'region.postal_codes': 1 } }],
  documentIds: (event: RecordedEvent) => [
    (event as unknown as RegionEvent).type === 'RegionListed'
      ? (event.data as { region: RegionTerms }).region.id
      : (event.data as { regionId: string }).regionId,
  ],
  evolve(view, recorded) {
    const event = recorded as unknown as RegionEvent;
    const region = event.type === 'RegionListed' ? event.data.region : { ...view!.region, ...event.data.changes };
    return { _id: region.id, _pos: recorded.position, region, cityKey: cityKey(region.city, region.state) };
  },
});
