import type { ValidationIssue } from '@deals/kernel';

/** User ids one request may name. */
export const USER_IDS_PER_REQUEST = 1000;

const DAY_MS = 86_400_000;
const issue = (field: string, message: string): ValidationIssue => ({
  type: message === 'is required' ? 'missing_field' : 'invalid',
  resource: 'batch',
  field,
  message,
});

/** The UTC date (`YYYY-MM-DD`) of an instant. */
export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/**
 * `send_at` falls tomorrow (UTC): from tonight's midnight, inclusive, to
 * tomorrow's, exclusive. `now` is the service's clock.
 */
export function isTomorrow(sendAt: Date, now: Date): boolean {
  const tonight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + DAY_MS;
  return sendAt.getTime() >= tonight && sendAt.getTime() < tonight + DAY_MS;
}

/** What the request's deal is, as far as a batch cares. */
export type BatchDeal = { found: false } | { found: true; state: string; startAt: number; endAt: number };

/**
 * The refusals of a batch's deal and `send_at`, every one that applies, in their fixed messages. The
 * users are checked against the partner's accounts and the day's schedule afterwards.
 */
export function dealAndTimeIssues(deal: BatchDeal, sendAt: Date, now: Date): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!deal.found) issues.push(issue('deal_id', 'unknown deal'));
  else if (deal.state !== 'in-flight' && deal.state !== 'approved')
    issues.push(issue('deal_id', "deal's status must be in-flight or approved"));
  if (!isTomorrow(sendAt, now)) issues.push(issue('send_at', 'must be tomorrow'));
  if (deal.found && sendAt.getTime() < deal.startAt) issues.push(issue('send_at', "must be after deal's start time"));
  if (deal.found && sendAt.getTime() >= deal.endAt) issues.push(issue('send_at', "must be before deal's end time"));
  return issues;
}
