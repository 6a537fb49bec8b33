import { ValidationFailed, ValidationIssue } from '@deals/kernel';

/** A list's paging: count, per_page (default 100, at most 1000), page (default 1). */
export interface Paging {
  count: boolean;
  page: number;
  perPage: number;
  skip: number;
}

export const PER_PAGE_DEFAULT = 100;
export const PER_PAGE_MAX = 1000;

/** Reads a whole number from a query string or JSON value; undefined when absent. */
export function wholeNumber(value: unknown): number | undefined | null {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : NaN;
  return Number.isSafeInteger(n) ? n : null;
}

/** Reads true/false from a query string ("true", "1", ...) or JSON value; undefined when absent. */
export function flagValue(value: unknown): boolean | undefined | null {
  if (value === undefined || value === null || value === '') return undefined;
  if (value === true || value === false) return value;
  // Only text or a number is read: an array or object (however deep) is not a flag.
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const text = String(value).trim().toLowerCase();
  if (['true', '1', 'yes'].includes(text)) return true;
  if (['false', '0', 'no'].includes(text)) return false;
  return null;
}

/** Reads count, per_page and page: the paging, or the problems found (each naming its field). */
export function pagingIssues(params: Record<string, unknown>, resource = 'request'): { paging: Paging | null; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const count = flagValue(params.count);
  if (count === null) issues.push({ type: 'invalid', resource, field: 'count', message: 'must be true or false' });
  // With count, per_page and page are ignored, whatever they hold.
  if (count === true) return { paging: { count: true, page: 1, perPage: PER_PAGE_DEFAULT, skip: 0 }, issues };
  const perPage = wholeNumber(params.per_page);
  if (perPage === null || (perPage !== undefined && (perPage < 1 || perPage > PER_PAGE_MAX))) {
    issues.push({ type: 'invalid', resource, field: 'per_page', message: `must be a whole number from 1 to ${PER_PAGE_MAX}` });
  }
  const page = wholeNumber(params.page);
  if (page === null || (page !== undefined && page < 1))
    issues.push({ type: 'invalid', resource, field: 'page', message: 'must be a whole number from 1' });
  if (issues.length) return { paging: null, issues };
  const size = perPage ?? PER_PAGE_DEFAULT;
  const number = page ?? 1;
  return { paging: { count: false, page: number, perPage: size, skip: (number - 1) * size }, issues };
}

export function parsePaging(params: Record<string, unknown>, resource = 'request'): Paging {
  const { paging, issues } = pagingIssues(params, resource);
  if (!paging) throw new ValidationFailed(issues);
  return paging;
}
