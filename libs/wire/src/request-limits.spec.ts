import type { FastifyReply } from 'fastify';
import { rateLimitFields } from '../../../test/support/rate-limit-fields';
import type { AuthenticatedRequest, PartnerRef, UserTokenRef } from './authenticated-request';
import { addressKey, RequestLimits } from './request-limits';

describe('addressKey: the address wrong credentials are counted against', () => {
  it('keeps an IPv4 address, also written as IPv4-mapped IPv6', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });
  it('counts an IPv6 address by its /64, however it is written', () => {
    expect(addressKey('2001:db8:0:1:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64');
    expect(addressKey('2001:0db8:0000:0001::1')).toBe('2001:db8:0:1::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });
});

describe('RequestLimits.spend: RateLimit-Policy and RateLimit on every answer of a counted request', () => {
  const settings = { partnerPerMinute: 40, userTokenPerMinute: 3, failuresPerAddress: 10, failuresPerIdentity: 5 };
  const partner = (id: string, requestsPerMinute: number | null = null): PartnerRef => ({
    id,
    name: id,
    role: 'partner',
    requestsPerMinute,
    livemode: true,
  });
  const token: UserTokenRef = { userId: 'user-1', scope: 'all', access: ['read'], expiresAt: '2030-01-01T00:00:00Z' };

  /** A reply that keeps the headers set on it. */
  function answer() {
    const headers: Record<string, string> = {};
    const reply = {
      header(name: string, value: unknown) {
        headers[name] = String(value);
        return reply;
      },
    };
    return { headers, reply: reply as unknown as FastifyReply };
  }

  async function spent(limits: RequestLimits, request: Partial<AuthenticatedRequest>, counter?: string, policy?: string) {
    const { headers, reply } = answer();
    const refusal = await limits.spend(request as AuthenticatedRequest, reply, counter, policy);
    return { refusal, headers, told: rateLimitFields(headers) };
  }

  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-06-15T12:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it("tells the partner's budget on every answer, what is left moving down to 0 and the refusal included", async () => {
    const limits = RequestLimits.inMemory(settings);
    const flooding = { partner: partner('p-1', 5) };
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push(await spent(limits, flooding));
    for (const { headers } of answers) expect(headers['ratelimit-policy']).toBe('"partner";q=5;w=60');
    expect(answers.map(({ headers }) => headers.ratelimit)).toEqual([
      '"partner";r=4;t=60',
      '"partner";r=3;t=60',
      '"partner";r=2;t=60',
      '"partner";r=1;t=60',
      '"partner";r=0;t=60',
      '"partner";r=0;t=60',
      '"partner";r=0;t=60',
    ]);
    expect(answers.map(({ refusal }) => refusal !== null)).toEqual([false, false, false, false, false, true, true]);
    expect(answers[5].told).toEqual(new Map([['partner', { quota: 5, window: 60, remaining: 0, reset: 60 }]]));
    // The X- fields as before: once a fifth of the budget or less is left.
    expect(answers.map(({ headers }) => headers['x-ratelimit-remaining'])).toEqual([undefined, undefined, undefined, '1', '0', '0', '0']);
  });

  it("says the seconds to the window's end rounded up, and the whole budget again once it has ended", async () => {
    const limits = RequestLimits.inMemory(settings);
    const caller = { partner: partner('p-2') };
    expect((await spent(limits, caller)).headers.ratelimit).toBe('"partner";r=39;t=60');
    jest.advanceTimersByTime(20_500);
    expect((await spent(limits, caller)).headers.ratelimit).toBe('"partner";r=38;t=40');
    jest.advanceTimersByTime(39_499);
    expect((await spent(limits, caller)).headers.ratelimit).toBe('"partner";r=37;t=1');
    jest.advanceTimersByTime(1);
    const renewed = await spent(limits, caller);
    expect([renewed.headers['ratelimit-policy'], renewed.headers.ratelimit]).toEqual(['"partner";q=40;w=60', '"partner";r=39;t=60']);
  });

  it("tells each partner its own budget: its own or the service's", async () => {
    const limits = RequestLimits.inMemory(settings);
    expect((await spent(limits, { partner: partner('p-3', 1000) })).headers['ratelimit-policy']).toBe('"partner";q=1000;w=60');
    expect((await spent(limits, { partner: partner('p-4') })).headers['ratelimit-policy']).toBe('"partner";q=40;w=60');
    expect((await spent(limits, { partner: partner('p-3', 1000) })).headers.ratelimit).toBe('"partner";r=998;t=60');
  });

  it("adds the user's tokens' budget to a call made with an access token, which refuses while the partner's has room", async () => {
    const limits = RequestLimits.inMemory(settings);
    const asToken = { partner: partner('p-5'), userToken: token };
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await spent(limits, asToken));
    // The partner's budget is not the token's business until a fifth of it or less is left.
    for (const { headers } of answers) expect(headers['ratelimit-policy']).toBe('"user";q=3;w=60');
    expect(answers.map(({ headers }) => headers.ratelimit)).toEqual([
      '"user";r=2;t=60',
      '"user";r=1;t=60',
      '"user";r=0;t=60',
      '"user";r=0;t=60',
    ]);
    expect(answers[3].refusal?.message).toContain('access tokens of this user');
    // A refused call spent nothing of the partner's: its own calls tell its budget alone, 3 spent.
    expect((await spent(limits, { partner: partner('p-5') })).headers.ratelimit).toBe('"partner";r=36;t=60');
    // Near the partner's end, a token's call is still told its own budget alone, X-RateLimit-* included.
    const small = { partner: partner('p-6', 5), userToken: token };
    for (let i = 0; i < 2; i++) await spent(limits, small);
    const near = await spent(limits, small);
    expect([near.headers['ratelimit-policy'], near.headers.ratelimit]).toEqual(['"user";q=3;w=60', '"user";r=0;t=60']);
    expect([near.headers['x-ratelimit-limit'], near.headers['x-ratelimit-remaining']]).toEqual(['3', '0']);
  });

  it("never spends the partner's budget on a call the token's own budget refuses", async () => {
    const limits = RequestLimits.inMemory(settings);
    const asToken = { partner: partner('p-8', 10), userToken: { ...token, userId: 'user-8' } };
    const answers = [];
    for (let i = 0; i < 50; i++) answers.push(await spent(limits, asToken));
    expect(answers.filter(({ refusal }) => refusal === null)).toHaveLength(3);
    // The partner's key still has all of its budget but the 3 calls let through.
    const own = [];
    for (let i = 0; i < 8; i++) own.push(await spent(limits, { partner: partner('p-8', 10) }));
    expect(own.map(({ refusal }) => refusal === null)).toEqual([...Array(7).fill(true), false]);
    // No answer to the token names the partner, its budget or what is left of it.
    for (const { refusal, headers } of answers) {
      expect(JSON.stringify(headers)).not.toMatch(/partner|p-8|q=10|"10"/);
      expect(refusal?.message ?? '').not.toMatch(/p-8|10/);
    }
  });

  it("refuses a token once the partner's budget is spent, telling it neither the partner nor its budget, and gives its own call back", async () => {
    const limits = RequestLimits.inMemory(settings);
    const asToken = { partner: partner('p-7', 2), userToken: { ...token, userId: 'user-7' } };
    // The partner's window opens first (its own calls), the token's 10 seconds later.
    await spent(limits, { partner: partner('p-7', 2) });
    jest.advanceTimersByTime(10_000);
    expect((await spent(limits, asToken)).refusal).toBeNull();
    const refused = await spent(limits, asToken);
    expect(refused.refusal).toEqual({ retryAfterMs: 50_000, message: expect.stringContaining('partner is over its request budget') });
    expect(refused.refusal!.message).not.toMatch(/p-7|2/);
    // Told its own budget, the refused call given back: 2 of its 3 left.
    expect([refused.headers['ratelimit-policy'], refused.headers.ratelimit]).toEqual(['"user";q=3;w=60', '"user";r=2;t=60']);
    expect(refused.headers['x-ratelimit-limit']).toBeUndefined();
    // Past the partner's window, the token has its 2 calls left.
    jest.advanceTimersByTime(50_000);
    const after = [await spent(limits, asToken), await spent(limits, asToken), await spent(limits, asToken)];
    expect(after.map(({ refusal }) => refusal === null)).toEqual([true, true, false]);
  });

  it("tells a token over its own budget to wait for the partner's window too when that is spent and ends later", async () => {
    const limits = RequestLimits.inMemory({ ...settings, partnerPerMinute: 4 });
    const asToken = { partner: partner('p-9'), userToken: { ...token, userId: 'user-9' } };
    // The token's window opens at 0 with the partner's; the partner's ends at 60, the token's goes on to 70.
    await spent(limits, { partner: partner('p-9') });
    jest.advanceTimersByTime(10_000);
    for (let i = 0; i < 3; i++) await spent(limits, asToken);
    jest.advanceTimersByTime(50_000);
    // A new window of the partner's, from 60 to 120, spent by its own calls.
    for (let i = 0; i < 4; i++) await spent(limits, { partner: partner('p-9') });
    const refused = await spent(limits, asToken);
    expect(refused.refusal?.message).toContain('access tokens of this user');
    expect(refused.refusal!.retryAfterMs).toBe(60_000);
    // The partner's own next call is refused by its own budget alone: the token's refusal spent none of it.
    expect((await spent(limits, { partner: partner('p-9') })).headers.ratelimit).toBe('"partner";r=0;t=60');
  });

  it("names a budget of the partner's size spent by another counter as its caller says", async () => {
    const limits = RequestLimits.inMemory(settings);
    const { headers, told } = await spent(limits, { partner: partner('p-6', 10) }, 'site:member-1', 'member');
    expect([headers['ratelimit-policy'], headers.ratelimit]).toEqual(['"member";q=10;w=60', '"member";r=9;t=60']);
    expect(told?.get('member')?.remaining).toBe(9);
    expect((await spent(limits, { partner: partner('p-6', 10) })).headers.ratelimit).toBe('"partner";r=9;t=60');
  });
});
