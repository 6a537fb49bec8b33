import { ValidationFailed, type ValidationIssue } from '@deals/kernel';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorAnswer } from './error.filter';

/** The rule every text taken must keep, as a refusal words it. */
export const TEXT_RULE = 'must be well-formed Unicode text without NUL';
/** What a refusal says of an object one of whose field names breaks the rule (the name itself is never echoed). */
export const FIELD_NAME_RULE = 'holds a field whose name must be well-formed Unicode text without NUL';

/**
 * Headers whose text the service keeps (in an event's metadata, an idempotency record) or looks up.
 * Node's parser refuses a NUL in a header and reads the rest as Latin-1, which is always well
 * formed: these are checked all the same, so that no change of parser lets such a text through.
 */
export const KEPT_HEADERS = ['idempotency-key', 'x-correlation-id', 'deals-test-clock'] as const;

/** Whether a text is one every store can keep: no lone surrogate, no U+0000. */
export const isStorableText = (text: string): boolean => (text as WellFormedCheck).isWellFormed() && !text.includes('\u0000');

/** `String.prototype.isWellFormed` (ES2024, in Node 20 and later), which the compiler's library (ES2023) does not declare. */
type WellFormedCheck = string & { isWellFormed(): boolean };

/**
 * Adds to `found` an entry for every string in `value` that is not storable text, and for every
 * object one of whose keys is not: the field named by its path joined with dots (`items.3.user_id`),
 * or `root` at the top, and the rule. One pass over the value; `path` is one array kept for the
 * whole walk (pushed and popped), so a walk that finds nothing allocates nothing.
 */
export function findMalformedText(value: unknown, path: Array<string | number>, root: string, found: ValidationIssue[]): void {
  if (typeof value === 'string') {
    if (!isStorableText(value)) found.push(issue(path, root, TEXT_RULE));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      findMalformedText(value[i], path, root, found);
      path.pop();
    }
    return;
  }
  let badKey = false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (!isStorableText(key)) {
      badKey = true;
      continue;
    }
    path.push(key);
    findMalformedText((value as Record<string, unknown>)[key], path, root, found);
    path.pop();
  }
  if (badKey) found.push(issue(path, root, FIELD_NAME_RULE));
}

/** A validation entry: the field and the rule, never the text. */
const issue = (path: Array<string | number>, root: string, message: string): ValidationIssue => ({
  type: 'invalid',
  resource: 'request',
  field: path.length ? path.join('.') : root,
  message,
});

/** The refusal of a request with text the service does not take, or null when all of it is storable. */
export function malformedTextIn(request: Pick<FastifyRequest, 'params' | 'query' | 'body' | 'headers'>): ValidationFailed | null {
  const found: ValidationIssue[] = [];
  const path: Array<string | number> = [];
  findMalformedText(request.params, path, 'path', found);
  findMalformedText(request.query, path, 'query', found);
  findMalformedText(request.body, path, 'body', found);
  for (const name of KEPT_HEADERS) {
    const header = request.headers[name];
    if (header !== undefined) findMalformedText(header, path, name, found);
  }
  return found.length ? new ValidationFailed(found) : null;
}

/** How a part of the service answers a refusal where its pages are not JSON (a site's form: its error page). */
export type TextRefusalAnswer = (request: FastifyRequest, reply: FastifyReply, refusal: ValidationFailed) => unknown;

/**
 * The one check, for every route, of every text a request carries: path parameters, query (names and
 * values), the parsed body (JSON or form: every string and every field name, at any depth, a bulk
 * job's items included) and the headers the service keeps. Text with a lone surrogate (a JSON
 * `"\ud800"` escape) or a NUL (`\u0000`, `%00`) is refused 422 `validation_failed`, one entry per
 * field naming it and the rule, before any route-level hook (idempotency, a site's CSRF check) or
 * handler sees it: no store then meets text it cannot keep. Under the `pages` prefixes, the refusal
 * is answered by their own function; elsewhere in the error body. Unknown paths are left to their 404.
 */
export function refuseMalformedText(fastify: FastifyInstance, pages: Record<string, TextRefusalAnswer> = {}): void {
  const prefixes = Object.entries(pages);
  fastify.addHook('preValidation', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (request.is404) return done();
    const refusal = malformedTextIn(request);
    if (!refusal) return done();
    const url = request.routeOptions.url ?? '';
    const page = prefixes.find(([prefix]) => url === prefix || url.startsWith(`${prefix}/`));
    if (page) return void page[1](request, reply, refusal);
    const { status, body } = errorAnswer(refusal);
    void reply.status(status).send(body);
  });
}
