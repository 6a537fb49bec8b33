import { IdempotencyStore, IdempotentRun, pooledRandomText, RecordedAnswer } from '@deals/kernel';
import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { errorBody } from './error-body';
import type { AuthenticatedRequest } from './authenticated-request';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** 1 to 255 printable ASCII characters (a UUID is the usual choice). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
const HEADER = IDEMPOTENCY_KEY_HEADER.toLowerCase();

/** The methods whose calls take a key: every call that writes. */
export const WRITE_METHODS = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/**
 * Answers not kept, so that a retry with the key runs the request again (resuming its run: what it
 * wrote is found under the run's ids): refused before it ran (credentials, an auditor writing), a
 * conflict with another request that may be over by then (`already_charging`), the request budget,
 * and the service's own failures. Every other answer (a success, a refusal of the request itself, a
 * processor's failure) is kept and sent again.
 */
const NOT_KEPT = new Set([401, 403, 408, 409, 429, 500, 503, 504]);

/** A run's id: 72 random bits in 12 characters, as a short id's random part. */
const newRunId = pooledRandomText(9);

/** Query parameters that carry credentials, not the request: a key used again after a key rotation is the same request. */
const CREDENTIAL_PARAMS = new Set(['api_key', 'access_token']);

interface KeyedRequest extends AuthenticatedRequest {
  idempotency?: IdempotentRun & {
    sealing: Buffer;
    partnerId: string;
    /** The answer shows a secret once: what a repeat gets instead (none: a refusal). */
    secretShown?: { instead?: { contentType: string; body: Buffer } };
  };
}

/**
 * Marks a write route that takes a dry run (`"dry_run": true` in its JSON body): a dry run writes
 * nothing, so its `Idempotency-Key` is neither claimed nor kept, and the same key may then carry
 * the request itself.
 */
export const TakesDryRuns = () => RouteConfig({ dryRuns: true });

/** Marks a write route whose every call is a dry run (its own operation): no key is claimed or kept. */
export const AnswersDryRuns = () => RouteConfig({ dryRuns: 'always' });

/** Whether the request is a dry run: of a route that is one ({@link AnswersDryRuns}), or that takes them ({@link TakesDryRuns}). */
const isDryRun = (request: FastifyRequest) => {
  const dryRuns = (request.routeOptions.config as { dryRuns?: boolean | 'always' } | undefined)?.dryRuns;
  return dryRuns === 'always' || (dryRuns === true && (request.body as { dry_run?: unknown } | null | undefined)?.dry_run === true);
};

/** How often each process purges expired keys (s): a partner whose share is full waits about this long. */
export const PURGE_EVERY_S = 900;

/** The largest answer kept for a repeat (bytes): a larger one is not kept, and its repeat says so. */
export const MAX_KEPT_ANSWER_BYTES = 256 * 1024;

/** Why an answer was not kept: a secret it shows once, its size, or its partner's answers filling their share of the store. */
export type NotKeptReason = 'secret' | 'size' | 'partner_full';

export interface IdempotencyOptions {
  store: () => IdempotencyStore;
  /**
   * The installation's secret: key ids, request fingerprints (a stored card's body holds its number)
   * and sealing keys are HMACs under it, so that what the store holds tells nothing without it.
   */
  secret: Buffer;
  now: () => number;
  /** How long a key and its answer are kept (ms). */
  keepMs: number;
  /** What a partner's kept keys and answers may take up (bytes); past it, answers are not kept. */
  maxBytesPerPartner: number;
  /** Told when an answer is not kept for a repeat (a smaller one saying so is). */
  onNotKept: (reason: Exclude<NotKeptReason, 'secret'>, request: FastifyRequest, partnerId: string) => void;
  /** Told when an answer could not be kept (it is sent all the same). */
  onRecordFailed: (error: unknown, request: FastifyRequest) => void;
}

/**
 * Makes every call that writes safe to retry (the `Idempotency-Key` header, as Stripe's API and the
 * IETF draft define it). The first request with a key runs, and its answer (status and body, sealed
 * under the key and the installation's secret) is kept before it is sent; a repeat of the same request (method, path, query without
 * credentials, and body, by a canonical hash) is answered with it and `Idempotent-Replayed: true`;
 * a repeat with another request is refused (422), one while the first runs answers 409 with
 * `Retry-After`. Keys are the partner's (or, with a user's access token, that user's).
 * The hooks are added to the routes that write only, and cost a request without a key one check.
 */
export function answerRepeatedRequests(fastify: FastifyInstance, options: IdempotencyOptions): void {
  const claimKey = (request: KeyedRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (request.headers[HEADER] === undefined || !request.partner) return done();
    // A dry run claims no key, but a malformed one is refused as the real call would refuse it.
    if (isDryRun(request)) {
      if (wellFormedKey(request)) return done();
      void refuseMalformedKey(reply);
      return;
    }
    claim(request, reply, options).then(
      (run) => (run ? done() : undefined),
      (error: unknown) => (reply.sent ? request.log.warn({ err: error }, 'an idempotent reply could not be sent') : done(error as Error)),
    );
  };
  const keepAnswer = (request: KeyedRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
    const keyed = request.idempotency;
    if (!keyed) return done(null, payload);
    request.idempotency = undefined;
    const store = options.store();
    const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : null;
    const kept =
      body === null || NOT_KEPT.has(reply.statusCode)
        ? store.release(keyed.keyId)
        : store.answer(keyed.keyId, toKeep(request, reply, keyed, body, options));
    kept.then(
      () => done(null, payload),
      (error: unknown) => {
        options.onRecordFailed(error, request);
        store.release(keyed.keyId).catch(() => undefined);
        done(null, payload);
      },
    );
  };
  fastify.addHook('onRoute', (route) => {
    if (![route.method].flat().some((method) => WRITE_METHODS.has(method))) return;
    route.preHandler = [...[route.preHandler ?? []].flat(), claimKey as never];
    route.onSend = [...[route.onSend ?? []].flat(), keepAnswer as never];
  });
}

/**
 * What is kept of an answer (sealed): the answer itself; for one that shows a secret once, what its
 * handler gave instead, or a refusal saying so; for one too large for the store or its partner's
 * share of it, a refusal saying the request was answered and its answer not kept.
 */
function toKeep(
  request: KeyedRequest,
  reply: FastifyReply,
  keyed: NonNullable<KeyedRequest['idempotency']>,
  body: Buffer,
  options: IdempotencyOptions,
): RecordedAnswer {
  const status = reply.statusCode;
  let reason: NotKeptReason | null = null;
  if (keyed.secretShown) {
    const instead = keyed.secretShown.instead;
    if (instead) return { status, contentType: instead.contentType, body: seal(keyed.sealing, instead.body) };
    reason = 'secret';
  } else if (body.length > MAX_KEPT_ANSWER_BYTES) reason = 'size';
  else if ((options.store().keptBytes().get(keyed.partnerId) ?? 0) + body.length > options.maxBytesPerPartner) reason = 'partner_full';
  if (reason === null) {
    const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
    return { status, contentType, body: seal(keyed.sealing, body) };
  }
  if (reason !== 'secret') options.onNotKept(reason, request, keyed.partnerId);
  const notice = errorBody(
    'idempotent_answer_not_kept',
    `the request sent with this ${IDEMPOTENCY_KEY_HEADER} was carried out and answered ${status}, but its answer is not sent again: ${NOT_KEPT_BECAUSE[reason]}`,
    undefined,
    { answered_status: status },
  );
  return { status: 422, contentType: 'application/json; charset=utf-8', body: seal(keyed.sealing, Buffer.from(JSON.stringify(notice))) };
}

const NOT_KEPT_BECAUSE: Record<NotKeptReason, string> = {
  secret: 'it showed a secret once (read the resource with a GET, or make a new secret)',
  size: `it was larger than the ${MAX_KEPT_ANSWER_BYTES.toLocaleString('en-US')} bytes kept (read the result with a GET)`,
  partner_full: "the partner's kept answers had reached their limit (read the result with a GET)",
};

/**
 * The answer being sent shows a secret once (a new API key, password, signing secret, access
 * token): a repeat of the request with the same key never gets the secret again, but `instead`
 * (the same resource without its secret, with the same status) or, without it, a refusal saying
 * the request was carried out. Without a key, nothing to do.
 */
export function answerRepeatsWithoutSecret(request: FastifyRequest, instead?: { body: string; contentType: string }): void {
  const keyed = (request as KeyedRequest).idempotency;
  if (keyed) keyed.secretShown = { instead: instead && { contentType: instead.contentType, body: Buffer.from(instead.body) } };
}

/** Whether the request's key is sent once, 1 to 255 printable ASCII characters. */
function wellFormedKey(request: KeyedRequest): boolean {
  const key = request.headers[HEADER];
  return typeof key === 'string' && IDEMPOTENCY_KEY_PATTERN.test(key) && !sentTwice(request);
}

function refuseMalformedKey(reply: FastifyReply) {
  return reply
    .status(400)
    .send(errorBody('bad_request', `${IDEMPOTENCY_KEY_HEADER} must be sent once, 1 to 255 printable ASCII characters`));
}

/** Claims the request's key; true when the request is to run, false when it was answered here. */
async function claim(request: KeyedRequest, reply: FastifyReply, options: IdempotencyOptions): Promise<boolean> {
  const key = request.headers[HEADER];
  if (typeof key !== 'string' || !wellFormedKey(request)) {
    await refuseMalformedKey(reply);
    return false;
  }
  const { secret } = options;
  const scope = request.userToken ? `${request.partner!.id}/user:${request.userToken.userId}` : request.partner!.id;
  const keyId = createHmac('sha256', secret).update(`key\0${scope}\0${key}`).digest('base64url');
  const now = options.now();
  // A partner whose keys fill its share of the store gets no new one (a refusal, small and not
  // kept, instead of a claim and an answer): its share frees up as keys expire and are purged. A
  // key it holds already is answered as ever.
  const partnerId = request.partner!.id;
  if ((options.store().keptBytes().get(partnerId) ?? 0) >= options.maxBytesPerPartner && !(await options.store().holds(keyId, now))) {
    options.onNotKept('partner_full', request, partnerId);
    await reply
      .status(429)
      .header('retry-after', String(PURGE_EVERY_S))
      .send(
        errorBody(
          'idempotency_keys_full',
          `the partner's ${IDEMPOTENCY_KEY_HEADER}s and their kept answers fill its share of the store: a request with a new key is refused until older keys expire (or send it without the header)`,
        ),
      );
    return false;
  }
  const runId = newRunId();
  const outcome = await options.store().claim({
    keyId,
    partnerId: request.partner!.id,
    fingerprint: fingerprint(request, secret),
    now,
    expiresAt: now + options.keepMs,
    runId,
  });
  switch (outcome.kind) {
    case 'new':
    case 'resumed':
      request.idempotency = {
        keyId,
        startedAt: outcome.startedAt,
        runId: outcome.runId,
        resumed: outcome.kind === 'resumed',
        ended: outcome.kind === 'resumed' && outcome.ended,
        sealing: sealingKey(secret, scope, key),
        partnerId: request.partner!.id,
      };
      return true;
    case 'answered':
      await replay(reply, outcome.answer, sealingKey(secret, scope, key));
      return false;
    case 'running':
      await reply
        .status(409)
        .header('retry-after', '1')
        .send(
          errorBody(
            'idempotency_key_in_use',
            `a request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; send it again once it is answered`,
          ),
        );
      return false;
    case 'mismatch':
      await reply
        .status(422)
        .send(
          errorBody(
            'idempotency_key_reused',
            `this ${IDEMPOTENCY_KEY_HEADER} was used for another request (method, path, query or body differ); a new request needs a new key`,
          ),
        );
      return false;
  }
}

function replay(reply: FastifyReply, answer: RecordedAnswer, sealing: Buffer) {
  return reply
    .status(answer.status)
    .header('content-type', answer.contentType)
    .header('idempotent-replayed', 'true')
    .send(open(sealing, answer.body));
}

/** What makes two requests the same: method, path, the query without credentials (sorted), and the body as canonical JSON. */
function fingerprint(request: FastifyRequest, secret: Buffer): string {
  const [path, query = ''] = request.url.split(/\?(.*)/s, 2);
  const params = [...new URLSearchParams(query)].filter(([name]) => !CREDENTIAL_PARAMS.has(name)).sort(compareEntries);
  return createHmac('sha256', secret)
    .update(`${request.method}\n${path}\n${JSON.stringify(params)}\n${canonicalJson(request.body)}`)
    .digest('base64url');
}

const compareEntries = ([a, x]: [string, string], [b, y]: [string, string]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0);

/**
 * JSON with every object's keys sorted: equal values give equal texts, whatever order their keys
 * came in. Recursive: a body reaches it only once its depth is known to be within MAX_JSON_DEPTH.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const entries = Object.keys(value)
    .filter((name) => (value as Record<string, unknown>)[name] !== undefined)
    .sort()
    .map((name) => `${JSON.stringify(name)}:${canonicalJson((value as Record<string, unknown>)[name])}`);
  return `{${entries.join(',')}}`;
}

/**
 * The key that seals a kept answer: an HMAC of the caller's key under the installation's secret, so
 * that what is kept (coupon codes, an access token) is unreadable without both.
 */
function sealingKey(secret: Buffer, scope: string, key: string): Buffer {
  return createHmac('sha256', secret).update(`seal\0${scope}\0${key}`).digest();
}

/** The header given more than once (Node would join the values into one that looks like a key). */
function sentTwice(request: FastifyRequest): boolean {
  let seen = 0;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === HEADER.length && raw[i].toLowerCase() === HEADER && ++seen > 1) return true;
  return false;
}

function seal(sealing: Buffer, body: Buffer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealing, iv);
  const sealed = Buffer.concat([cipher.update(body), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

function open(sealing: Buffer, kept: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', sealing, kept.subarray(0, 12));
  decipher.setAuthTag(kept.subarray(12, 28));
  return Buffer.concat([decipher.update(kept.subarray(28)), decipher.final()]);
}

/**
 * The run of the request's `Idempotency-Key`, or null without one: a handler names what it makes
 * after it (a purchase's id), so that a run again after a crash finds what the first made.
 */
export const IdempotentRequest = createParamDecorator((_: unknown, context: ExecutionContext): IdempotentRun | null => {
  const run = context.switchToHttp().getRequest<KeyedRequest>().idempotency;
  return run ? { keyId: run.keyId, startedAt: run.startedAt, runId: run.runId, resumed: run.resumed, ended: run.ended } : null;
});

/** Forgets expired keys now and every `everyMs` (each process of the service may: a purge is idempotent); returns the stop. */
export function purgeExpiredKeys(
  store: IdempotencyStore,
  now: () => number,
  everyMs: number,
  onError: (error: unknown) => void,
): () => void {
  const purge = () => void store.purge(now()).catch(onError);
  purge();
  const timer = setInterval(purge, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
