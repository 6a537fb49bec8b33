import { DomainError, inTestClock, Unauthorized } from '@deals/kernel';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthenticatedRequest, CredentialVerifier, PartnerRef } from './authenticated-request';
import { errorBody } from './error-body';
import { clientAddress } from './client-address';
import { attemptedIdentity, refuse, RequestLimits } from './request-limits';
import { isStorableText } from './well-formed-text';

/**
 * Paths anyone may call: the health report, the API description and its Swagger UI, a coupon's QR image and
 * printable page (opened by the coupon's holder; coupon ids carry 72 random bits), deals' pictures, and
 * the key the log's checkpoints are signed with.
 */
export const PUBLIC_PATHS = [
  /^\/health(\/|\?|$)/,
  /^\/api-docs(\.json|\/|\?|$)/,
  /^\/coupons\/[^/?]+\/(qr\.png|print)(\?|$)/,
  /^\/subscriptions\/[^/?]+\/unsubscribe(\?|$)/,
  /^\/images\/deals\/([^/?]+\/)?[^/?]+(\?|$)/,
  /^\/audit\/checkpoint-key(\?|$)/,
];

/** The auditor's pages, opened in a browser: they take the v3 username and password as basic credentials too, asked by the browser. */
const AUDIT_PAGES = /^\/audit\/pages\//;

/** The partner site's pages: people of a partner, signed in with their own session (libs/partner-site), never API credentials. */
export const SESSION_PATHS = [/^\/partner(\/|\?|$)/];

/** Paths for the service's operator (its metrics, the jobs' board): the operator's credentials, never a partner's. */
export const OPERATOR_PATHS = [/^\/metrics(\?|$)/, /^\/admin(\/|\?|$)/];
export const OPERATOR_USERNAME = 'operator';

/** Says on every authenticated answer whether live or test credentials (a sandbox's) made the call. */
export const LIVEMODE_HEADER = 'deals-livemode';
/** Names the sandbox's test clock a call is made under. */
export const TEST_CLOCK_HEADER = 'deals-test-clock';

/** Credentials a request presents, read but not yet checked. */
type Presented =
  { kind: 'username'; username: string; password: string } | { kind: 'api_key'; apiKey: string } | { kind: 'token'; tokenId: string };

function presentedBasic(request: FastifyRequest): Presented {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(request.headers.authorization ?? '');
  if (!match) throw new Unauthorized('missing credentials: give your username and password as HTTP basic credentials');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // Checked here, before the text check of the request (credentials are read first): a NUL no
  // username holds, which a store asked for it (PostgreSQL) would fail on.
  if (colon <= 0 || !isStorableText(decoded)) throw new Unauthorized('wrong username or password');
  return { kind: 'username', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * A credential's query parameter: its text, or undefined when absent. Given more than once with
 * one value it is that value; with different values the request is refused, since either could be
 * the one the caller meant.
 */
function credentialParameter(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  if (!Array.isArray(value)) return typeof value === 'string' ? value : undefined;
  // eslint-disable-next-line no-restricted-syntax -- parameter names, counts and access words of ours
  if (value.some((v) => v !== value[0])) throw new Unauthorized(`${name} given ${value.length} times with different values: give it once`);
  return typeof value[0] === 'string' ? value[0] : undefined;
}

function presentedToken(request: FastifyRequest): string | null {
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  if (bearer) return bearer[1];
  const query = credentialParameter(request, 'access_token');
  return query !== undefined && query !== '' ? query : null;
}

function presentedKeyOrToken(request: FastifyRequest): Presented {
  const tokenId = presentedToken(request);
  if (tokenId !== null) return { kind: 'token', tokenId };
  const apiKey = credentialParameter(request, 'api_key');
  if (apiKey === undefined || apiKey === '')
    throw new Unauthorized('missing api_key: pass your partner API key as the api_key query parameter');
  return { kind: 'api_key', apiKey };
}

const identityOf = (presented: Presented) =>
  presented.kind === 'username'
    ? attemptedIdentity('username', presented.username)
    : presented.kind === 'api_key'
      ? attemptedIdentity('api_key', presented.apiKey)
      : attemptedIdentity('token', presented.tokenId);

/** Credentials that name no account (as against missing ones, or right ones that were revoked or expired): counted against the caller. */
class WrongCredentials extends Unauthorized {}

async function verified(
  verifier: CredentialVerifier,
  request: AuthenticatedRequest,
  presented: Presented,
  now: number,
): Promise<PartnerRef> {
  if (presented.kind === 'username') {
    const partner = await verifier.byUsernameAndPassword(presented.username, presented.password);
    if (!partner) throw new WrongCredentials('wrong username or password');
    return partner;
  }
  if (presented.kind === 'api_key') {
    const partner = await verifier.byApiKey(presented.apiKey);
    if (!partner) throw new WrongCredentials('wrong api_key');
    return partner;
  }
  const found = await verifier.byAccessToken(presented.tokenId);
  if (!found) throw new WrongCredentials('unknown access token');
  if (Date.parse(found.token.expiresAt) <= now) throw new Unauthorized('access token expired');
  request.userToken = found.token;
  return found.partner;
}

/**
 * Authenticates every request before routing, by the rules of its generation: HTTP basic
 * credentials (the userinfo of the address) on /api/v3, `api_key` in the query everywhere else,
 * or there a user's access token (`Authorization: Bearer <id>` or `access_token=<id>`), which acts
 * for its user and partner (see {@link AccessGuard}).
 * Unknown paths are no exception, so nothing about the routes shows without credentials.
 * {@link OPERATOR_PATHS} take the operator's credentials instead (`operator` and `operatorPassword`).
 * With `limits`, wrong credentials are counted by client address and by the account they aimed at,
 * and those past either's limit are answered 429 with a growing delay; right credentials are never
 * refused for anyone's failures (keys and passwords are 192 random bits: nothing to guess). An
 * authenticated request is counted against its budgets.
 */
export function authenticateEveryRequest(
  fastify: FastifyInstance,
  verifier: () => CredentialVerifier,
  now: () => number,
  { limits = null, operatorPassword }: { limits?: RequestLimits | null; operatorPassword: string },
): void {
  const operator = operatorCheck(createHash('sha256').update(`${OPERATOR_USERNAME}:${operatorPassword}`).digest(), limits);
  // One hook for every kind of path: a hook more costs every request a promise.
  fastify.addHook('onRequest', async (request: AuthenticatedRequest, reply: FastifyReply) => {
    const path = routedPath(request);
    if (PUBLIC_PATHS.some((pattern) => pattern.test(path))) return;
    if (SESSION_PATHS.some((pattern) => pattern.test(path))) return;
    if (OPERATOR_PATHS.some((pattern) => pattern.test(path))) return operator(request, reply);
    const v3 = path.startsWith('/api/v3');
    const page = !v3 && AUDIT_PAGES.test(path);
    let presented: Presented | null = null;
    try {
      presented =
        v3 || (page && /^Basic\s/i.test(request.headers.authorization ?? '')) ? presentedBasic(request) : presentedKeyOrToken(request);
      request.partner = await verified(verifier(), request, presented, now());
      void reply.header(LIVEMODE_HEADER, request.partner.livemode ? 'true' : 'false');
      // Counted here rather than in a hook of its own: one hook less on every request. Against the
      // account, before a test clock is looked up: the sandbox's budget covers its clocks.
      const spent = limits ? await limits.spend(request, reply) : null;
      if (spent) return refuse(reply, spent);
      const clockId = request.headers[TEST_CLOCK_HEADER];
      if (clockId !== undefined) {
        const writes = request.method !== 'GET' && request.method !== 'HEAD';
        const scope = await verifier().testClock(request.partner, String(clockId), writes);
        // The rest of the call acts as the clock's world of the sandbox, in the clock's time.
        request.partner = { ...request.partner, id: scope.partnerId };
        request.testClock = scope;
      }
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (limits && presented && error instanceof WrongCredentials) {
        const refusal = await limits.failed(clientAddress(request), identityOf(presented));
        if (refusal) return refuse(reply, refusal);
      }
      if (v3 || page) void reply.header('www-authenticate', `Basic realm="${page ? 'deals audit' : 'deals'}", charset="UTF-8"`);
      return reply.status(error.httpStatus).send(errorBody(error.errorType, error.message));
    }
  });
}

/**
 * Runs the rest of a call made under a test clock (its later hooks, the route's handler and all
 * they await) in the clock's time. A hook of its own, called back rather than awaited: the
 * handler then starts inside `inTestClock`, which an awaited hook cannot arrange.
 */
export function keepTestClocks(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request: AuthenticatedRequest, _reply, done) => {
    const scope = request.testClock;
    if (scope) inTestClock(scope, done);
    else done();
  });
}

/**
 * Lets only the operator (`operator` and its password, HTTP basic) through. The password is chosen
 * by a person, not 192 random bits: an address past its limit of wrong credentials is refused before
 * the password is checked, so guessing from one address stays slow (others' addresses are not).
 * Answers the refusal, or returns undefined to let it pass.
 */
function operatorCheck(expected: Buffer, limits: RequestLimits | null) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const throttled = limits ? await limits.addressThrottled(clientAddress(request)) : null;
    if (throttled) return refuse(reply, throttled);
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(request.headers.authorization ?? '');
    const given = match ? createHash('sha256').update(Buffer.from(match[1], 'base64').toString('utf8')).digest() : null;
    if (given && timingSafeEqual(given, expected)) return undefined;
    const refusal = given && limits ? await limits.failed(clientAddress(request), attemptedIdentity('username', OPERATOR_USERNAME)) : null;
    if (refusal) return refuse(reply, refusal);
    void reply.header('www-authenticate', 'Basic realm="deals operations", charset="UTF-8"');
    return reply
      .status(401)
      .send(
        errorBody(
          'unauthorized',
          given ? 'wrong operator credentials' : 'missing credentials: give the operator credentials as HTTP basic credentials',
        ),
      );
  };
}

/**
 * The path the rules above are judged on: the pattern of the route the router matched (it decodes
 * escapes, so `/%61pi/v3/...` reaches a v3 route and must be judged as one), or, where no route
 * matches, the request's path with its escapes decoded.
 */
export function routedPath(request: FastifyRequest): string {
  const pattern = request.routeOptions?.url;
  if (typeof pattern === 'string' && pattern !== '') return pattern;
  const path = request.url.split('?')[0];
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
