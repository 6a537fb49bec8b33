import type { FastifyRequest } from 'fastify';
import { SiteSecrets } from '../commands/site-secrets';
import { DEVICE_LIFETIME_S, deviceCookie, knownDevice, throttledAccount } from './device-cookies';

const secrets = new SiteSecrets(Buffer.alloc(32, 1));
const MEMBER = '0123456789abcdef01234567';
const OTHER = 'fedcba9876543210fedcba98';
const now = new Date('2026-06-15T12:00:00Z');
const later = (seconds: number) => new Date(now.getTime() + seconds * 1000);
/** The cookie header a browser sends back for a `Set-Cookie` line. */
const sent = (setCookie: string) => setCookie.split(';')[0];

describe('device cookies', () => {
  it('are long-lived, HttpOnly, Secure, SameSite=Strict cookies of the site', () => {
    expect(deviceCookie(secrets, MEMBER, now)).toMatch(
      new RegExp(`^partner_device=[^;]+; Max-Age=${DEVICE_LIFETIME_S}; Path=/partner; HttpOnly; Secure; SameSite=Strict$`),
    );
  });

  it('name a device of their member until they end, and a new device each time', () => {
    const cookie = sent(deviceCookie(secrets, MEMBER, now));
    const device = knownDevice(secrets, `a=b; ${cookie}`, MEMBER, later(60));
    expect(device).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(knownDevice(secrets, sent(deviceCookie(secrets, MEMBER, now)), MEMBER, now)).not.toBe(device);
    expect(knownDevice(secrets, cookie, MEMBER, later(DEVICE_LIFETIME_S - 1))).toBe(device);
    expect(knownDevice(secrets, cookie, MEMBER, later(DEVICE_LIFETIME_S))).toBeNull();
  });

  it('are ignored for another member, changed, signed under another key, or of another shape', () => {
    const cookie = sent(deviceCookie(secrets, MEMBER, now));
    const [name, value] = cookie.split('=');
    const [member, endsAt, device, mac] = value.split('.');
    expect(knownDevice(secrets, cookie, OTHER, now)).toBeNull();
    expect(knownDevice(secrets, `${name}=${OTHER}.${endsAt}.${device}.${mac}`, OTHER, now)).toBeNull();
    expect(knownDevice(secrets, `${name}=${member}.${Number(endsAt) + 1}.${device}.${mac}`, MEMBER, now)).toBeNull();
    expect(knownDevice(secrets, `${name}=${member}.${endsAt}.${device}.${'A'.repeat(43)}`, MEMBER, now)).toBeNull();
    const elsewhere = new SiteSecrets(Buffer.alloc(32, 2));
    expect(knownDevice(secrets, sent(deviceCookie(elsewhere, MEMBER, now)), MEMBER, now)).toBeNull();
    for (const header of [undefined, '', `${name}=`, `${name}=${value}.x`, `${name}=${'x'.repeat(5000)}`])
      expect(knownDevice(secrets, header, MEMBER, now)).toBeNull();
  });

  it("make a check count against the device, and without one against the member's account", () => {
    const request = (cookie?: string) => ({ headers: cookie === undefined ? {} : { cookie } }) as FastifyRequest;
    const cookie = sent(deviceCookie(secrets, MEMBER, now));
    expect(throttledAccount(secrets, request(cookie), MEMBER, now)).toEqual({
      memberId: MEMBER,
      device: knownDevice(secrets, cookie, MEMBER, now),
    });
    expect(throttledAccount(secrets, request(cookie), OTHER, now)).toBe(OTHER);
    expect(throttledAccount(secrets, request(), MEMBER, now)).toBe(MEMBER);
  });
});
