import { clipText, type ValidationIssue } from '@deals/kernel';

/** The longest `error_msg`: a message that names what a client sent is cut there. */
export const MAX_ERROR_MESSAGE = 2000;

/** The error body of every refusal and failure (docs/api.md, Errors). */
export interface ErrorBody {
  status: 'error';
  error_type: string;
  error_msg: string;
  errors?: ValidationIssue[];
  [extra: string]: unknown;
}

export function errorBody(errorType: string, message: string, issues?: ValidationIssue[], extra: Record<string, unknown> = {}): ErrorBody {
  return {
    status: 'error',
    error_type: errorType,
    error_msg: clipText(message, MAX_ERROR_MESSAGE),
    ...(issues && issues.length ? { errors: issues } : {}),
    ...extra,
  };
}
