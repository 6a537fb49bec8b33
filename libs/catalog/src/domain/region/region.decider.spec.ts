import { ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { regionDecider } from './region.decider';
import { RegionTerms } from './region.events';

const region = (overrides: Partial<RegionTerms> = {}): RegionTerms => ({
  id: 'new-york',
  name: 'New York',
  active: true,
  city: 'New York',
  state: 'NY',
  time_zone: 'America/New_York',
  latitude: 40.7128,
  longitude: -74.006,
  postal_codes: ['10001'],
  ...overrides,
});
const given = deciderSpec(regionDecider);
const list = (r: RegionTerms) => ({ type: 'ListRegion' as const, data: { region: r } });

describe('region decider', () => {
  it('lists a new region', () =>
    given([])
      .when(list(region()))
      .then([{ type: 'RegionListed', data: { region: region() } }]));
  it('records what changed on a listed region, and nothing when nothing did', () => {
    const listed = [{ type: 'RegionListed' as const, data: { region: region() } }];
    given(listed)
      .when(list(region({ active: false })))
      .then([{ type: 'RegionRevised', data: { regionId: 'new-york', changes: { active: false } } }]);
    given(listed).when(list(region())).then([]);
  });
  it('refuses an unknown time zone or a bad state code', () => {
    given([])
      .when(list(region({ time_zone: 'Mars/Olympus', state: 'New York' })))
      .thenThrows(ValidationFailed, {
        issues: [expect.objectContaining({ field: 'state' }), expect.objectContaining({ field: 'time_zone' })],
      });
  });
});
