import type { ValidationIssue } from '@deals/kernel';

/**
 * What is wrong with `total` as a deal's total units: none when it is a whole number from 0. Pure,
 * so that a catalogue import can refuse a whole record before writing any of it.
 */
export function stockTotalIssues(total: unknown): ValidationIssue[] {
  if (!(Number.isSafeInteger(total) && (total as number) >= 0))
    return [{ type: 'invalid', resource: 'deal', field: 'quantity', message: 'must be a whole number, not negative' }];
  if ((total as number) > MAX_STOCK)
    return [{ type: 'invalid', resource: 'deal', field: 'quantity', message: `must be at most ${MAX_STOCK.toLocaleString('en-US')}` }];
  return [];
}

/** The most units a deal is stocked with: past this a count is a mistake, not a deal. */
export const MAX_STOCK = 1_000_000_000;

/**
 * The most units one purchase takes. Each unit is a coupon with its own event, QR image and entry
 * in the answer (~1.3 KB), so an unbounded purchase would take seconds, answer tens of megabytes
 * and hold every other call up meanwhile. A buyer of more makes several purchases.
 */
export const MAX_UNITS_PER_PURCHASE = 1000;

/**
 * What is wrong with `value` as the number of units of one purchase (`field`: its name in the
 * call), or null: a whole number from 1 to {@link MAX_UNITS_PER_PURCHASE}.
 */
export function unitCountIssue(value: unknown, field: string): ValidationIssue | null {
  if (Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_UNITS_PER_PURCHASE) return null;
  return {
    type: value === undefined || value === null ? 'missing_field' : 'invalid',
    resource: 'purchase',
    field,
    message: `must be a whole number from 1 to ${MAX_UNITS_PER_PURCHASE}`,
  };
}
