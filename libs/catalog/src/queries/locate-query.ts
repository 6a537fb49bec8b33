import { ValidationFailed, ValidationIssue, ViewFilter } from '@deals/kernel';
import { withinMiles } from './deal-filters';
import { decimalValue } from './v1-query';

/** GET /deals/locate: latitude, longitude and radius (miles), all required. */
export function parseLocate(params: Record<string, unknown>): { within: ViewFilter } {
  const issues: ValidationIssue[] = [];
  const read = (field: string, range: string, within: (n: number) => boolean) => {
    const raw = params[field];
    // Blank text is missing too (Number(' ') would read it as 0).
    if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === ''))
      return (issues.push({ type: 'missing_field', resource: 'deal', field, message: 'is required' }), NaN);
    const n = decimalValue(raw) ?? NaN;
    // eslint-disable-next-line no-restricted-syntax -- the range of ours
    if (!Number.isFinite(n) || !within(n)) issues.push({ type: 'invalid', resource: 'deal', field, message: `must be a number ${range}` });
    return n;
  };
  const latitude = read('latitude', 'from -90 to 90', (n) => Math.abs(n) <= 90);
  const longitude = read('longitude', 'from -180 to 180', (n) => Math.abs(n) <= 180);
  const radius = read('radius', 'of miles above 0, at most 12500', (n) => n > 0 && n <= 12_500);
  if (issues.length) throw new ValidationFailed(issues);
  return { within: withinMiles(latitude, longitude, radius) };
}
