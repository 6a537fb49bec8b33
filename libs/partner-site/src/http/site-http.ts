import { PARTNER_ACCOUNTS } from '@deals/accounts';
import { sandboxOf, type ViewDocument, type ViewStore } from '@deals/kernel';
import { AuthenticatedRequest, PartnerRef, refuse, RequestLimits } from '@deals/wire';
import { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { newSecret, secretHash, SiteSecrets } from '../commands/site-secrets';
import { SESSION_LIFETIME_MS } from '../domain/member/member-rules';
import { MemberSessions, SignedInMember } from './member-sessions';
import { SitePages } from './site-pages';
import { answerUnreadableForms } from './site-request';
import { SiteRequest } from './site-state';

export const SITE_PREFIX = '/partner';
export const SESSION_COOKIE = 'partner_session';
/** The cookie of a visitor not signed in, which the sign-in and sign-up forms' CSRF tokens are bound to. */
export const FORM_COOKIE = 'partner_form';
/** A form cookie the service made: 256 random bits, a dot, their HMAC-SHA256 under the site's key. */
const FORM_COOKIE_SHAPE = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;
const FORM_COOKIE_LIFETIME_S = 3600;

/** The name RateLimit-Policy and RateLimit give a signed-in person's own budget. */
const MEMBER_POLICY = 'member';

/** Pages for visitors not signed in. */
const ANONYMOUS_ROUTES = new Set([`${SITE_PREFIX}/sign-in`, `${SITE_PREFIX}/sign-up`, `${SITE_PREFIX}/site.css`]);

/** No script at all, styles and images from the service only, forms posted only to it, never framed. */
export const SITE_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const SITE_HEADERS: Record<string, string> = {
  'content-security-policy': SITE_POLICY,
  // Nothing to other origins; the site's own forms keep their Origin header (under no-referrer a
  // browser posts them with `Origin: null`, which the origin check must refuse).
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'strict-transport-security': 'max-age=31536000',
};

export interface SiteDependencies {
  sessions: MemberSessions;
  secrets: SiteSecrets;
  pages: SitePages;
  views: ViewStore;
  limits: RequestLimits | null;
}

/**
 * A cookie of the site: HttpOnly, Secure, SameSite=Strict, for its paths only; `maxAge` 0 removes
 * it. Values are the site's own base64url texts, which need no encoding.
 */
export function siteCookie(name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Max-Age=${maxAgeSeconds}; Path=${SITE_PREFIX}; HttpOnly; Secure; SameSite=Strict`;
}

/** The request's cookies by name (the first of a name counts: a cookie of a narrower path comes first). */
export function cookiesOf(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

export const sessionCookie = (sessionId: string) => siteCookie(SESSION_COOKIE, sessionId, SESSION_LIFETIME_MS / 1000);
export const endedSessionCookie = () => siteCookie(SESSION_COOKIE, '', 0);

/** The synchronizer token of a session or a visitor's form cookie: an HMAC of its hash, so a page of one session is no good in another. */
export const csrfToken = (secrets: SiteSecrets, bound: string) => createHmac('sha256', secrets.csrfKey).update(bound).digest('base64url');

/** Whether two texts are equal, compared in constant time (a MAC given against the one expected). */
export const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

const formCookieMac = (secrets: SiteSecrets, nonce: string) =>
  createHmac('sha256', secrets.formCookieKey).update(nonce).digest('base64url');

/** A new visitor's form cookie, which only the service can make. */
function newFormCookie(secrets: SiteSecrets): string {
  const nonce = newSecret();
  return `${nonce}.${formCookieMac(secrets, nonce)}`;
}

/** Whether a form cookie is one the service made (its MAC compared in constant time); a value a client chose is not. */
function isOwnFormCookie(secrets: SiteSecrets, value: string): boolean {
  const parts = FORM_COOKIE_SHAPE.exec(value);
  return parts !== null && sameText(parts[2], formCookieMac(secrets, parts[1]));
}

/** `https://` and a host as `new URL` writes its origin (lower case, no default port), or null when it is none. */
function httpsOrigin(host: string): string | null {
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(host)) return null;
  try {
    return new URL(`https://${host}`).origin;
  } catch {
    return null;
  }
}

/** The origin of an Origin or Referer header, or null (`null`, a malformed value, not https). */
function originOf(header: string): string | null {
  try {
    const url = new URL(header);
    return url.protocol === 'https:' ? url.origin : null;
  } catch {
    return null;
  }
}

/**
 * Whether a post comes from a page of this service. The service is served on HTTPS only (directly,
 * or behind the TLS proxy, which must forward `X-Forwarded-Proto: https`), so its origin is https
 * and the host the browser asked for: `request.host`, the Host header, or under BEHIND_TLS_PROXY
 * (Fastify's trustProxy) the `X-Forwarded-Host` the proxy sends. The Origin header must be that
 * origin; a browser that sends none is judged by its Referer. A post with neither is refused: every
 * browser sends Origin with a form's POST, so only a client that is not a browser omits both.
 */
function postedFromThisSite(request: FastifyRequest): boolean {
  const own = httpsOrigin(request.host);
  if (own === null) return false;
  const { origin, referer } = request.headers;
  if (origin !== undefined) return originOf(origin) === own;
  return referer !== undefined && originOf(referer) === own;
}

/**
 * The partner site's plumbing on Fastify, for the routes under /partner only (route hooks, added as
 * Nest registers them; the API's routes pay nothing; its form bodies are read by the bootstrap's
 * `parseFormBodies`): the session or visitor cookie,
 * the partner's request budget, the origin and CSRF checks of every POST, the security headers, the
 * page of a form refused before its handler (too large);
 * and the site's own 404 page for unknown paths under /partner. Call before the application
 * registers its routes; `dependencies` is asked once the application is up.
 */
export function serveSite(fastify: FastifyInstance, dependencies: () => SiteDependencies): void {
  const onRequest = authenticate(dependencies);
  const preHandler = checkCsrf(dependencies);
  fastify.addHook('onRoute', (route: RouteOptions) => {
    if (route.url !== SITE_PREFIX && !route.url.startsWith(`${SITE_PREFIX}/`)) return;
    route.onRequest = [...[route.onRequest ?? []].flat(), onRequest as onRequestHookHandler];
    route.preHandler = [...[route.preHandler ?? []].flat(), preHandler];
    route.onSend = [...[route.onSend ?? []].flat(), securityHeaders(route.url)];
    // A form refused before its page's handler (too large, say) is answered as a page too.
    route.errorHandler = answerUnreadableForms(() => dependencies().pages);
  });
  // A not-found handler of the prefix (Fastify's 404 router): unknown paths under /partner get the
  // site's page and headers; the API's 404 (Nest's, answered in JSON) and its routes are untouched.
  void fastify.register(
    async (site) => {
      const notFound = answerUnknownPage(dependencies);
      site.setNotFoundHandler(notFound);
      // A body that cannot be read (an API's JSON, too large) on an unknown path: still no such page.
      site.setErrorHandler((_error, request, reply) => notFound(request, reply));
    },
    { prefix: SITE_PREFIX },
  );
}

/** The cookie that keeps a member's choice of test mode (its value `test`); it selects between two accounts of their partner. */
export const MODE_COOKIE = 'site_mode';

type SiteAccount = ViewDocument & { name: string; requestsPerMinute: number | null };

/**
 * The member acting on their partner's sandbox when they chose test mode and the sandbox is open,
 * else on the live account; with that account's view (one look-up either way).
 */
async function inChosenMode(
  member: SignedInMember,
  mode: string | undefined,
  views: ViewStore,
): Promise<{ member: SignedInMember; account: SiteAccount | null }> {
  const sandbox = mode === 'test' ? await views.findById<SiteAccount>(PARTNER_ACCOUNTS, sandboxOf(member.partnerId)) : null;
  if (sandbox) return { member: { ...member, accountId: sandbox._id, livemode: false }, account: sandbox };
  return { member, account: await views.findById<SiteAccount>(PARTNER_ACCOUNTS, member.partnerId) };
}

function authenticate(dependencies: () => SiteDependencies) {
  return async (request: SiteRequest, reply: FastifyReply) => {
    const { sessions, secrets, views, limits } = dependencies();
    const cookies = cookiesOf(request.headers.cookie);
    const sessionId = cookies.get(SESSION_COOKIE);
    const signedIn = sessionId
      ? await sessions.authenticate(sessionId, { requestId: String(request.id), correlationId: String(request.id) })
      : null;
    if (signedIn) {
      const { member, account: partner } = await inChosenMode(signedIn, cookies.get(MODE_COOKIE), views);
      const ref: PartnerRef = {
        id: member.accountId,
        name: partner?.name ?? '',
        role: 'partner',
        requestsPerMinute: partner?.requestsPerMinute ?? null,
        livemode: member.livemode,
      };
      request.partner = ref;
      request.site = { member, partner: ref, csrfToken: csrfToken(secrets, `session:${member.sessionHash}:${member.accountId}`) };
      // A budget of the partner's size for each person: a flood through a leaked key cannot keep them from revoking it.
      const spent = limits ? await limits.spend(request as AuthenticatedRequest, reply, `site:${member.memberId}`, MEMBER_POLICY) : null;
      if (spent) return refuse(reply, spent);
      return;
    }
    // An ended session's cookie goes: the browser stops sending it.
    if (sessionId) void reply.header('set-cookie', endedSessionCookie());
    if (!ANONYMOUS_ROUTES.has(request.routeOptions.url ?? '')) return reply.redirect(`${SITE_PREFIX}/sign-in`, 303);
    // Only a cookie the service made is taken: one a client chose (set from a sibling domain, say)
    // is replaced, and the page's token is bound to the new one.
    let form = cookies.get(FORM_COOKIE);
    if (!form || !isOwnFormCookie(secrets, form)) {
      form = newFormCookie(secrets);
      void reply.header('set-cookie', siteCookie(FORM_COOKIE, form, FORM_COOKIE_LIFETIME_S));
    }
    request.site = { member: null, partner: null, csrfToken: csrfToken(secrets, `form:${secretHash(form)}`) };
  };
}

/**
 * Every form posted comes from a page of this service (its Origin, else its Referer) and carries the
 * token of its session (or visitor cookie); one that does not is refused, 403.
 */
function checkCsrf(dependencies: () => SiteDependencies) {
  return async (request: SiteRequest, reply: FastifyReply) => {
    if (request.method !== 'POST') return;
    const given = (request.body as Record<string, unknown> | undefined)?._csrf;
    const expected = request.site?.csrfToken;
    if (postedFromThisSite(request) && typeof given === 'string' && expected && sameText(given, expected)) return;
    const html = dependencies().pages.render(request, 'message', {
      title: 'Form refused',
      message:
        'This form could not be accepted: it was not sent from this site, or it is out of date. Go back, reload the page and try again.',
    });
    return reply.status(403).type('text/html; charset=utf-8').send(html);
  };
}

/** The site's 404 page, in its layout (without a member's navigation: no session is looked up for it) and with its headers. */
function answerUnknownPage(dependencies: () => SiteDependencies) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    for (const [name, value] of Object.entries(SITE_HEADERS)) void reply.header(name, value);
    const html = dependencies().pages.render(request, 'message', { title: 'Not found', message: 'There is no such page.' });
    return reply.status(404).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
  };
}

function securityHeaders(routeUrl: string) {
  const stylesheet = routeUrl === `${SITE_PREFIX}/site.css`;
  return (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
    for (const [name, value] of Object.entries(SITE_HEADERS)) void reply.header(name, value);
    void reply.header('cache-control', stylesheet ? 'public, max-age=3600' : 'no-store');
    done(null, payload);
  };
}
