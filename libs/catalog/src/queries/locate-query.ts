import { ValidationFailed, ValidationIssue, ViewFilter } from '@deals/kernel';
import { withinMiles } from './deal-filters';

/** GET /deals/locate: latitude, longitude and radius (miles), all required (part 4.3). */
export function parseLocate(params: Record<string, unknown>): { within: ViewFilter } {
  const issues: ValidationIssue[] = [];
  const read = (field: string, limit: number) => {
    const raw = params[field];
    // Blank text is missing too (Number(' ') would read it as 0).
    if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return issues.push({ type: 'missing_field', resource: 'deal', field, message: 'is required' }), NaN;
    const n = typeof raw === 'boolean' ? NaN : Number(raw);
    if (!Number.isFinite(n) || Math.abs(n) > limit) issues.push({ type: 'invalid', resource: 'deal', field, message: `must be a number from -${limit} to ${limit}` });
    return n;
  };
  const latitude = read('latitude', 90);
  const longitude = read('longitude', 180);
  const radius = read('radius', 12_500);
  if (Number.isFinite(radius) && radius <= 0) issues.push({ type: 'invalid', resource: 'deal', field: 'radius', message: 'must be more than 0 miles' });
  if (issues.length) throw new ValidationFailed(issues);
  return { within: withinMiles(latitude, longitude, radius) };
}
