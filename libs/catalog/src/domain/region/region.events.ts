import type { DomainEvent } from '@deals/kernel';

/** A region as the catalogue keeps it: a city with its IANA time zone and zip codes. */
export interface RegionTerms {
  id: string;
  name: string;
  active: boolean;
  city: string;
  state: string;
  time_zone: string;
  latitude: number;
  longitude: number;
  postal_codes: string[];
}

export type RegionListed = DomainEvent<'RegionListed', { region: RegionTerms }>;
export type RegionRevised = DomainEvent<'RegionRevised', { regionId: string; changes: Partial<RegionTerms> }>;
export type RegionEvent = RegionListed | RegionRevised;

export const regionStream = (regionId: string) => `region-${regionId}`;
