import type { ValidationIssue } from '@deals/kernel';

/** The error body of part 7.1 of the interface. */
export interface ErrorBody {
  status: 'error';
  error_type: string;
  error_msg: string;
  errors?: ValidationIssue[];
  [extra: string]: unknown;
}

export function errorBody(errorType: string, message: string, issues?: ValidationIssue[], extra: Record<string, unknown> = {}): ErrorBody {
  return { status: 'error', error_type: errorType, error_msg: message, ...(issues && issues.length ? { errors: issues } : {}), ...extra };
}
