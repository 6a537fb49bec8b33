/** One entry of a validation error body's `errors`. */
export interface ValidationIssue {
  type: 'missing_field' | 'missing' | 'invalid' | 'not_owner' | 'not_found';
  message: string;
  resource: string;
  field?: string;
}

/**
 * A refusal the partner should see. Each subclass is one wire `error_type`; the filter in
 * libs/wire maps it to its HTTP status and the error body.
 */
export abstract class DomainError extends Error {
  abstract readonly errorType: string;
  abstract readonly httpStatus: number;
  readonly issues: ValidationIssue[] = [];
  /** Extra top-level fields of the error body (e.g. `user_id`, `credit_card_id`). */
  readonly extra: Record<string, unknown> = {};
  /** Whole seconds to send as `Retry-After`, when the same request may succeed later. */
  readonly retryAfterSeconds: number | null = null;
}

export class NotFound extends DomainError {
  readonly errorType = 'find_failed';
  readonly httpStatus = 404;
}

export class CannotFulfil extends DomainError {
  /** The interface's documented spelling, kept for compatibility; the reseller call uses {@link CannotFulfilReseller}. */
  readonly errorType: string = 'cannot_fufill';
  readonly httpStatus = 422;
}

export class CannotFulfilReseller extends CannotFulfil {
  override readonly errorType = 'cannot_fulfill';
}

/** Another purchase of the user holds its charge lock (`holder`, until `until`, ms since the epoch). */
export class AlreadyCharging extends DomainError {
  readonly errorType = 'already_charging';
  readonly httpStatus = 409;
  constructor(
    message: string,
    readonly holder: string | null = null,
    readonly until: number | null = null,
  ) {
    super(message);
  }
}

/** A refusal of the moment: the same request may succeed after `Retry-After` (whole seconds, at least one). */
export abstract class RetryLater extends DomainError {
  override readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/**
 * A request sent with an `Idempotency-Key` whose earlier run's outcome is not known yet (its
 * purchase may still be charged): ask again after `Retry-After`, never a refusal.
 */
export class IdempotencyKeyInUse extends RetryLater {
  readonly errorType = 'idempotency_key_in_use';
  readonly httpStatus = 409;
  constructor(message: string, retryAfterMs: number) {
    super(message, retryAfterMs / 1000);
  }
}

/** A server the service needs (its database, Redis) does not answer. */
export class ServiceUnavailable extends RetryLater {
  readonly errorType = 'service_unavailable';
  readonly httpStatus = 503;
}

/**
 * A write kept losing to other processes' writes to the same records (a burst on one deal, say)
 * until its tries ran out; nothing of it was written, and it may be sent again.
 */
export class WriteContended extends ServiceUnavailable {
  constructor(what: string) {
    super(`${what} kept losing to other writes at the same moment; nothing was written, send the request again after Retry-After`, 1);
  }
}

export class Declined extends DomainError {
  readonly errorType = 'declined';
  readonly httpStatus = 422;
}

/** The payment processor failed (not a decline): nothing was charged; the call may be retried. */
export class PaymentFailed extends DomainError {
  readonly errorType = 'payment_failed';
  readonly httpStatus = 502;
}

/**
 * The processor did not answer the charge (it threw): whether the card was charged is not known.
 * The purchase is settled later from the processor's record (fulfilled if charged, else released);
 * `purchase_id` names it, so the caller can read its outcome.
 */
export class PaymentOutcomeUnknown extends PaymentFailed {
  override readonly extra: Record<string, unknown>;
  constructor(message: string, purchaseId: string) {
    super(message);
    this.extra = { purchase_id: purchaseId };
  }
}

export class UpdateFailed extends DomainError {
  readonly errorType = 'update_failed';
  readonly httpStatus = 422;
}

/** The most entries a validation failure names, and the longest text of one: what a client sent is never echoed without a bound. */
export const MAX_ISSUES = 20;
export const MAX_ISSUE_TEXT = 1000;

/** `text` cut to at most `max` characters (a cut one ends with an ellipsis; a surrogate pair is never split). */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (/[\uD800-\uDBFF]/.test(text[end - 1])) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * What a message says of the words a client sent that a field does not take: how many, never which
 * (a message names the field and its rule, not the value given).
 */
export function unknownWords(values: readonly string[]): string {
  return values.length === 1 ? '1 unknown word' : `${values.length.toLocaleString('en-US')} unknown words`;
}

const clipIssue = (issue: ValidationIssue): ValidationIssue => {
  if (issue.message.length <= MAX_ISSUE_TEXT && (issue.field?.length ?? 0) <= MAX_ISSUE_TEXT) return issue;
  const clipped = { ...issue, message: clipText(issue.message, MAX_ISSUE_TEXT) };
  if (issue.field !== undefined) clipped.field = clipText(issue.field, MAX_ISSUE_TEXT);
  return clipped;
};

/** Refused input: its first {@link MAX_ISSUES} problems, each of bounded length, and how many there were in all. */
export class ValidationFailed extends DomainError {
  readonly errorType = 'validation_failed';
  readonly httpStatus = 422;
  override readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[], message?: string) {
    const named = issues.slice(0, MAX_ISSUES).map(clipIssue);
    const more = issues.length - named.length;
    super(
      message ??
        named.map((i) => (i.field ? `${i.field} ${i.message}` : i.message)).join('; ') +
          (more > 0 ? `; and ${more.toLocaleString('en-US')} more problems` : ''),
    );
    this.issues = named;
  }
}

export class Unauthorized extends DomainError {
  readonly errorType = 'unauthorized';
  readonly httpStatus = 401;
}

export class Forbidden extends DomainError {
  readonly errorType = 'forbidden';
  readonly httpStatus = 403;
}

/** Shorthand for a one-entry validation failure. */
export function invalid(resource: string, field: string, message: string, type: ValidationIssue['type'] = 'invalid'): ValidationFailed {
  return new ValidationFailed([{ type, message, resource, field }]);
}

/**
 * The issue with a required text field, if any: `missing_field` when it is absent (undefined,
 * null or empty), `invalid` when it is there but not text (`5`, `["x"]`, an object): a caller who
 * sent the field is told what is wrong with it, not that it is missing.
 */
export function requiredTextIssue(value: unknown, resource: string, field: string): ValidationIssue | null {
  if (value === undefined || value === null || value === '') return { type: 'missing_field', resource, field, message: 'is required' };
  if (typeof value !== 'string') return { type: 'invalid', resource, field, message: 'must be a string' };
  return null;
}

/**
 * A write was made, and the views its answer is read from do not show it yet (the worker behind or
 * away past the wait for them): `extra` names what was written; a repeat with the same
 * Idempotency-Key, or a read after `Retry-After`, finds it.
 */
export class WrittenNotShown extends ServiceUnavailable {
  constructor(message: string, written: Record<string, unknown>) {
    super(`${message} (the views are behind); send the request again with the same Idempotency-Key, or read it after Retry-After`, 2);
    Object.assign(this.extra, written);
  }
}
