import type { FastifyRequest } from 'fastify';
import { createHmac, randomBytes } from 'node:crypto';
import type { SiteSecrets } from '../commands/site-secrets';
import type { ThrottledAccount } from './secret-check-throttle';
import { cookiesOf, sameText, siteCookie } from './site-http';

/**
 * The cookie of a member's known device (OWASP's device cookie): set at each right sign-in, it lets
 * that browser's sign-ins be throttled apart from the member's account, so that strangers' wrong
 * passwords cannot keep the member out of a device they signed in from before.
 */
export const DEVICE_COOKIE = 'partner_device';
/** How long a device stays known after its last sign-in. */
export const DEVICE_LIFETIME_S = 180 * 24 * 3600;

/** `<member id>.<end, seconds since the epoch>.<device id: 128 random bits>.<their HMAC-SHA256 under the site's device key>`. */
const DEVICE_COOKIE_SHAPE = /^([0-9a-f]{24})\.(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

const deviceMac = (secrets: SiteSecrets, signed: string) =>
  createHmac('sha256', secrets.deviceCookieKey).update(signed).digest('base64url');

/** The `Set-Cookie` value of a new known device of `memberId` (HttpOnly, Secure, SameSite=Strict, for the site's paths). */
export function deviceCookie(secrets: SiteSecrets, memberId: string, now: Date): string {
  const signed = `${memberId}.${Math.floor(now.getTime() / 1000) + DEVICE_LIFETIME_S}.${randomBytes(16).toString('base64url')}`;
  return siteCookie(DEVICE_COOKIE, `${signed}.${deviceMac(secrets, signed)}`, DEVICE_LIFETIME_S);
}

/**
 * The id of the known device a request's device cookie names, when the service made that cookie for
 * `memberId` and it has not ended at `now`; null for no cookie, another member's, an ended one, or
 * one the service did not make (its MAC compared in constant time).
 */
export function knownDevice(secrets: SiteSecrets, cookieHeader: string | undefined, memberId: string, now: Date): string | null {
  const parts = DEVICE_COOKIE_SHAPE.exec(cookiesOf(cookieHeader).get(DEVICE_COOKIE) ?? '');
  if (parts === null) return null;
  const [, member, endsAt, device, mac] = parts;
  if (!sameText(mac, deviceMac(secrets, `${member}.${endsAt}.${device}`))) return null;
  return member === memberId && Number(endsAt) * 1000 > now.getTime() ? device : null;
}

/** What a check of `memberId`'s secret on this request counts against besides its address: their known device, if the request is from one, else their account. */
export function throttledAccount(secrets: SiteSecrets, request: FastifyRequest, memberId: string, now: Date): ThrottledAccount {
  const device = knownDevice(secrets, request.headers.cookie, memberId, now);
  return device === null ? memberId : { memberId, device };
}
