import { Decider, DomainCommand, ignoredEvent, unknownCommand, ValidationFailed, ValidationIssue } from '@deals/kernel';
import { SLUG } from '../deal/deal-terms';
import { RegionEvent, RegionTerms } from './region.events';

export type ListRegion = DomainCommand<'ListRegion', { region: RegionTerms }>;

/** A region's stream: none yet, or a listed region and its terms. */
export type Region = { status: 'unlisted' } | { status: 'listed'; terms: RegionTerms };

function isTimeZone(zone: unknown): boolean {
  if (typeof zone !== 'string') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function validateRegion(region: Partial<RegionTerms>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const fail = (field: string, message: string) => issues.push({ type: 'invalid', resource: 'region', field, message });
  if (typeof region.id !== 'string' || !SLUG.test(region.id)) fail('id', 'must be a slug of lower-case letters, digits, - and _');
  if (typeof region.name !== 'string' || !region.name.trim()) fail('name', 'is required');
  if (typeof region.city !== 'string' || !region.city.trim()) fail('city', 'is required');
  if (typeof region.state !== 'string' || !/^[A-Z]{2}$/.test(region.state)) fail('state', 'must be two capital letters');
  if (typeof region.active !== 'boolean') fail('active', 'must be true or false');
  if (!isTimeZone(region.time_zone)) fail('time_zone', 'must be an IANA time zone');
  if (!(typeof region.latitude === 'number' && Math.abs(region.latitude) <= 90)) fail('latitude', 'must be from -90 to 90');
  if (!(typeof region.longitude === 'number' && Math.abs(region.longitude) <= 180)) fail('longitude', 'must be from -180 to 180');
  if (!Array.isArray(region.postal_codes) || !region.postal_codes.every((z) => typeof z === 'string' && /^\d{5}$/.test(z))) {
    fail('postal_codes', 'must be a list of five-digit zip codes');
  }
  return issues;
}

export const regionDecider: Decider<Region, ListRegion, RegionEvent> = {
  initialState: () => ({ status: 'unlisted' }),
  decide(command, state) {
    switch (command.type) {
      case 'ListRegion': {
        const { region } = command.data;
        const issues = validateRegion(region);
        if (issues.length) throw new ValidationFailed(issues);
        if (state.status === 'unlisted') return [{ type: 'RegionListed', data: { region } }];
        const changes: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(region)) {
          if (JSON.stringify(value) !== JSON.stringify((state.terms as unknown as Record<string, unknown>)[key])) changes[key] = value;
        }
        return Object.keys(changes).length ? [{ type: 'RegionRevised', data: { regionId: region.id, changes } }] : [];
      }
      default:
        return unknownCommand(command.type);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'RegionListed':
        return { status: 'listed', terms: event.data.region };
      case 'RegionRevised':
        // A revision follows the listing (one before it is none the decider wrote, and is ignored).
        return state.status === 'listed' ? { ...state, terms: { ...state.terms, ...event.data.changes } } : state;
      default:
        return ignoredEvent(event, state);
    }
  },
};
