import { applyDecorators, HttpCode } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { COMPONENT_SCHEMAS, componentSchemas, openApiSchema } from './request-dto';
import type { HeadersObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { z } from 'zod';
import { MAX_JSON_DEPTH } from './json-depth';

/** One entry of a validation error body's `errors`. */
export const validationIssueSchema = z
  .object({
    type: z.enum(['missing_field', 'missing', 'invalid', 'not_owner', 'not_found']),
    resource: z.string(),
    field: z.string().optional(),
    message: z.string(),
  })
  .meta({ id: 'ValidationIssue', description: 'one problem found' });

/** The error body: every refusal and failure of the service is answered in it. */
export const errorBodySchema = z
  .looseObject({
    status: z.literal('error'),
    error_type: z.string().meta({ description: 'find_failed, validation_failed, cannot_fufill, unauthorized, ...' }),
    error_msg: z.string(),
    errors: z.array(validationIssueSchema).optional(),
    user_id: z.string().optional(),
    credit_card_id: z.string().optional(),
    purchase_id: z.string().optional(),
  })
  .meta({
    id: 'Error',
    description: 'the error body of every refusal and failure',
    example: {
      status: 'error',
      error_type: 'validation_failed',
      error_msg: 'deal_id is required',
      errors: [{ type: 'missing_field', resource: 'purchase', field: 'deal_id', message: 'is required' }],
    },
  });

/** Where the description keeps the error body, shared by every operation. */
export const ERROR_ANSWER_REF = `${COMPONENT_SCHEMAS}Error`;

/** The named schemas of the description (the error body and every named resource), by name. */
export const sharedSchemas = () => {
  openApiSchema(errorBodySchema, 'output');
  return componentSchemas();
};

/**
 * An answer's schema as a response shows it: a named schema by reference, with its example beside
 * (an example on the response is what Swagger UI and the description's tests read).
 */
function answerSchema(body: z.ZodType): SchemaObject {
  const schema = openApiSchema(body, 'output') as SchemaObject & { $ref?: string };
  if (!schema.$ref) return schema;
  const named = componentSchemas()[schema.$ref.slice(COMPONENT_SCHEMAS.length)];
  return { allOf: [{ $ref: schema.$ref }], ...(named?.example !== undefined ? { example: named.example } : {}) };
}

/** What each status of the error body means, in the description of every operation that may answer it. */
const ERROR_STATUSES: Record<number, string> = {
  400: `the request cannot be read (a malformed address or header, a JSON body nested more than ${MAX_JSON_DEPTH} levels deep): error_type bad_request`,
  401: 'missing or wrong credentials: error_type unauthorized',
  403: 'the credentials may not make this call (an auditor writing, a token outside its scope): error_type forbidden; plain HTTP behind the TLS proxy: https_required',
  404: 'no such record for this partner: error_type find_failed',
  408: 'the request was not received in time: error_type bad_request',
  413: 'the body is larger than the service takes: error_type bad_request',
  414: 'a part of the address is longer than the router takes: error_type bad_request',
  415: 'a body that is not JSON (its Content-Type): error_type bad_request',
  417: 'an Expect header other than 100-continue: error_type bad_request',
  431: 'the request line and headers are too large: error_type bad_request',
  429: "over the partner's (or the user's tokens') request budget, or too many wrong credentials lately: error_type rate_limited; a new Idempotency-Key while the partner's kept keys fill their share of the store: idempotency_keys_full; Retry-After says when to ask again",
  409: "another purchase of this user is still being charged: error_type already_charging; a request whose Idempotency-Key's earlier run has not ended (its purchase may still be charged): idempotency_key_in_use with Retry-After",
  422: 'the request is refused: validation_failed with errors[], or the refusal of the call (cannot_fufill, declined, update_failed)',
  500: 'the service failed: error_type internal_error; the failure is logged',
  502: 'the payment processor failed or did not answer: error_type payment_failed',
  503: 'a server the service depends on (its database, Redis) is not answering: error_type service_unavailable; Retry-After says when to ask again (a write sent again with the same Idempotency-Key is answered as it ended, never done twice)',
};

/** The error answers of an operation beyond those every operation may give (COMMON_ERROR_STATUSES). */
export const ApiErrors = (...statuses: number[]) =>
  applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, description: ERROR_STATUSES[status], schema: { $ref: ERROR_ANSWER_REF } })),
  );

/** Statuses every authenticated operation may answer. */
export const COMMON_ERROR_STATUSES = [400, 401, 403, 408, 413, 414, 415, 417, 422, 429, 431, 500, 503];
/** Statuses every operation without credentials may answer: what the edge refuses before any route (plain HTTP: 403), a body that is not JSON, a too long id, a store away. */
export const PUBLIC_ERROR_STATUSES = [400, 403, 408, 413, 414, 415, 417, 422, 431, 500, 503];

const RETRY_AFTER = {
  'Retry-After': { description: 'seconds until the caller may ask again', schema: { type: 'integer', minimum: 1 } },
};

/** Where an answer's fields are said to be given: on answers to calls whose credentials were accepted, and only those. */
const COUNTED_CALLS =
  'On every answer to a call whose credentials were accepted (and so counted against its budgets), refusals and failures ' +
  'included; never on an answer to a call without accepted credentials (401, and the 429 of too many wrong credentials), ' +
  'on what the HTTP server answers itself (a malformed request, a request not received in time: 408, 414, 417, 431), ' +
  'nor when the installation counts no budgets.';

/** The fields of draft-ietf-httpapi-ratelimit-headers, described once (`components.headers`). */
export const RATE_LIMIT_HEADERS: HeadersObject = {
  'RateLimit-Policy': {
    description:
      'The request budgets this call was counted against (draft-ietf-httpapi-ratelimit-headers): an RFC 9651 List of ' +
      'Items, each a String naming a budget with the Integer parameters `q` (the requests it allows in a window) and `w` ' +
      '(the window, in seconds). `"partner";q=<budget>;w=60` is the partner\'s budget (a sandbox\'s test credentials ' +
      "have one of their own); a call made with a user's access token names its user's tokens' budget " +
      '(`"user";q=600;w=60`), and the partner\'s before it only once a fifth of that or less is left. ' +
      COUNTED_CALLS,
    schema: { type: 'string', example: '"partner";q=6000;w=60' },
  },
  RateLimit: {
    description:
      'What is left of each budget RateLimit-Policy names, counting this call: an RFC 9651 List of Items, each the ' +
      "budget's name (a String) with the Integer parameters `r` (the requests left in the current window, never below 0) " +
      'and `t` (whole seconds, rounded up, until the window ends and the budget is whole again), in the order ' +
      'RateLimit-Policy names them: `"partner";r=5999;t=60`. A call past a budget is answered 429 with `r=0`. ' +
      COUNTED_CALLS,
    schema: { type: 'string', example: '"partner";r=5999;t=60' },
  },
};

/** How an answer refers to the rate-limit fields' descriptions. */
const RATE_LIMIT_HEADER_REFS = Object.fromEntries(
  Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
);

/** Statuses answered before a request is counted against a budget: credentials not accepted, or the HTTP server's own refusals. */
const UNCOUNTED_STATUSES = new Set([401, 408, 414, 417, 431]);

/** Where the description keeps the error answers operations share (`components.responses`), by status. */
const COMMON_RESPONSE = (status: number) => `Error${status}`;
/** Likewise for operations without credentials, whose answers carry no rate-limit fields. */
const PUBLIC_RESPONSE = (status: number) => `PublicError${status}`;

type SharedResponse = {
  description: string;
  content: Record<string, { schema: { $ref: string } }>;
  headers?: HeadersObject;
};

/** An error answer of `status`, with the headers it may carry. */
function errorResponse(status: number, counted: boolean): SharedResponse {
  const headers = {
    ...(status === 429 || status === 503 ? RETRY_AFTER : {}),
    ...(counted && !UNCOUNTED_STATUSES.has(status) ? RATE_LIMIT_HEADER_REFS : {}),
  };
  return {
    description: ERROR_STATUSES[status],
    content: { 'application/json': { schema: { $ref: ERROR_ANSWER_REF } } },
    ...(Object.keys(headers).length ? { headers } : {}),
  };
}

/**
 * The error answers operations share, described once (`components.responses`): those of
 * authenticated operations (with the rate-limit fields) and those of operations without credentials.
 */
export function sharedErrorResponses(): Record<string, SharedResponse> {
  return Object.fromEntries([
    ...COMMON_ERROR_STATUSES.map((status) => [COMMON_RESPONSE(status), errorResponse(status, true)]),
    ...PUBLIC_ERROR_STATUSES.map((status) => [PUBLIC_RESPONSE(status), errorResponse(status, false)]),
  ]);
}

/** An authenticated operation's shared error answers, each a reference to its shared description. */
export function commonErrorResponses(): Record<string, { $ref: string }> {
  return Object.fromEntries(
    COMMON_ERROR_STATUSES.map((status) => [String(status), { $ref: `#/components/responses/${COMMON_RESPONSE(status)}` }]),
  );
}

/** Likewise for an operation without credentials. */
export function publicErrorResponses(): Record<string, { $ref: string }> {
  return Object.fromEntries(
    PUBLIC_ERROR_STATUSES.map((status) => [String(status), { $ref: `#/components/responses/${PUBLIC_RESPONSE(status)}` }]),
  );
}

/**
 * The success answer of an operation: its status (200 unless given) and body schema, with the
 * error statuses it may answer besides the common ones.
 */
export const ApiAnswer = (body: z.ZodType, options: { status?: number; description?: string; errors?: number[] } = {}) =>
  applyDecorators(
    ...(options.status && options.status !== 200 ? [HttpCode(options.status)] : []),
    ApiResponse({ status: options.status ?? 200, description: options.description ?? 'success', schema: answerSchema(body) }),
    ApiErrors(...(options.errors ?? [])),
  );

/** Security schemes, as the API description names them. */
export const SECURITY = { apiKey: 'api_key', basic: 'v3', bearer: 'access_token' } as const;

/** The `Idempotency-Key` header, described once and referenced by every operation that writes. */
export const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header' as const,
  required: false,
  description:
    'Makes the call safe to retry: 1 to 255 printable ASCII characters (a new UUID per request), kept at least 24 hours for the partner ' +
    "(or the access token's user). A repeat of the same request (method, path, query and body) is answered with the first answer and " +
    '`Idempotent-Replayed: true`, and nothing runs again; a key used for another request is refused (422 idempotency_key_reused); a ' +
    'repeat while the first is running answers 409 idempotency_key_in_use with Retry-After. Answers 401, 403, 409, 429, 500, 503 ' +
    'and 504 are not kept: a retry runs the request again. An answer that showed a secret once (a signing secret, an access token), ' +
    "or one over 256 KiB is not sent again: its repeat answers 422 idempotent_answer_not_kept with the first answer's status in " +
    "answered_status. While the partner's keys and answers fill its share of the store, a new key is refused: 429 " +
    'idempotency_keys_full with Retry-After.',
  schema: { type: 'string' as const, minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]{1,255}$' },
};

const IDEMPOTENCY_ANSWERS: Record<string, string> = {
  '409':
    'a request with this Idempotency-Key is still being processed: error_type idempotency_key_in_use; Retry-After says when to ask again',
  '422':
    'this Idempotency-Key was used for another request: error_type idempotency_key_reused; or its request was answered and the answer is not sent again: error_type idempotent_answer_not_kept',
};

const REPLAYED = {
  'Idempotent-Replayed': {
    description: 'true when this is the kept answer of an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

type DescribedOperation = {
  parameters?: unknown[];
  responses: Record<string, { $ref?: string; description: string; headers?: Record<string, unknown>; content?: unknown }>;
};

/** Describes the `Idempotency-Key` on an operation that writes: the header, its refusals, and the replay's header on every answer. */
export function describeIdempotency(operation: DescribedOperation, parameterRef: string): void {
  operation.parameters = [...(operation.parameters ?? []), { $ref: parameterRef }];
  for (const [status, description] of Object.entries(IDEMPOTENCY_ANSWERS)) {
    const answer = operation.responses[status];
    // A shared answer is copied here, to be told apart for this operation.
    const given = answer?.$ref ? sharedErrorResponses()[answer.$ref.slice(answer.$ref.lastIndexOf('/') + 1)] : answer;
    operation.responses[status] = given
      ? {
          ...given,
          description: `${given.description}; or ${description}`,
          headers: { ...given.headers, ...(status === '409' ? RETRY_AFTER : {}) },
        }
      : {
          description,
          content: { 'application/json': { schema: { $ref: ERROR_ANSWER_REF } } },
          ...(status === '409' ? { headers: RETRY_AFTER } : {}),
        };
  }
  // The shared error answers (references) are refused before the key is read, or never kept: no replay of them.
  for (const answer of Object.values(operation.responses))
    if (answer.$ref === undefined) answer.headers = { ...answer.headers, ...REPLAYED };
}

/** Describes the rate-limit fields on an authenticated operation's own answers (the shared ones describe them already). */
export function describeRateLimits(operation: DescribedOperation): void {
  for (const [status, answer] of Object.entries(operation.responses))
    if (answer.$ref === undefined && !UNCOUNTED_STATUSES.has(Number(status)))
      answer.headers = { ...answer.headers, ...RATE_LIMIT_HEADER_REFS };
}
