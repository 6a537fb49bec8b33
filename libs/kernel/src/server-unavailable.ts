import { StoreBusy } from './ports/event-store.port';

/** Seconds a caller is told to wait when a server the service needs does not answer. */
export const UNAVAILABLE_RETRY_AFTER_S = 2;

/** Network failures of a connection to a server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's SQLSTATEs of a server stopping or refusing, a connection lost, or a bound reached
 * (a lock waited for too long, a statement cancelled by its timeout, an idle transaction ended).
 */
const POSTGRES_STATES = new Set(['57P01', '57P02', '57P03', '53300', '55P03', '57014', '25P03']);

/** The messages of node-postgres and ioredis for a connection lost, refused or not made in time. */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Query read timeout/,
  /is not queryable/,
  /^Connection is closed/,
  /^Stream isn't writeable/,
  /^Reached the max retries per request limit/,
];

/**
 * Whether `error` (or what caused it) says that a server the service needs (PostgreSQL, Redis) is
 * away, past a bound or too busy to order a write in time: the same request may succeed once it is
 * back, so the answer is 503 with `Retry-After`, not a 500.
 */
export function serverUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false;
  if (error instanceof StoreBusy) return true;
  const { code, message, cause, errors } = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || POSTGRES_STATES.has(code) || code.startsWith('08'))) return true;
  if (typeof message === 'string' && DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
  // AggregateError (a connection tried on several addresses), and errors wrapping another.
  if (Array.isArray(errors) && errors.some((e) => serverUnavailable(e, depth + 1))) return true;
  return serverUnavailable(cause, depth + 1);
}
