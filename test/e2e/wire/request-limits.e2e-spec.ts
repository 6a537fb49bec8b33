import { ChangePartnerRateLimit } from '@deals/accounts';
import { OPERATOR } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { request } from 'undici';
import { TestApi } from '../../support/api-harness';
import { movableMonotonicClock } from '../../support/monotonic-clock';
import { rateLimitFields, RateLimitPolicy } from '../../support/rate-limit-fields';

const basic = (username: string, password: string) => ({ username, password });

/** The budgets an answer tells in RateLimit-Policy and RateLimit (checked against the draft's grammar), by policy name. */
function told(reply: { status: number; headers: Record<string, string | string[] | undefined> }): Map<string, RateLimitPolicy> {
  const fields = rateLimitFields(reply.headers);
  if (!fields) throw new Error(`an answer ${reply.status} without RateLimit-Policy and RateLimit`);
  for (const policy of fields.values()) {
    expect(policy.window).toBe(60);
    expect(Number.isInteger(policy.reset) && policy.reset! >= 0 && policy.reset! <= 60).toBe(true);
  }
  return fields;
}

describe('request budgets: 429 with Retry-After, per partner and per user token, over HTTPS', () => {
  let api: TestApi;
  let monotonic: ReturnType<typeof movableMonotonicClock>;

  beforeAll(async () => {
    monotonic = movableMonotonicClock();
    api = await TestApi.start({ env: { RATE_LIMIT_PER_MINUTE: '40', USER_TOKEN_RATE_LIMIT_PER_MINUTE: '5' } });
  });
  afterAll(async () => {
    await api.close();
    monotonic.restore();
  });

  it("refuses a partner's calls past its own budget with 429, Retry-After and the error body, and leaves other partners alone", async () => {
    const flooding = await api.createPartner('Flooding', 'partner', 20);
    const quiet = await api.createPartner('Quiet');
    const answers = [];
    for (let i = 0; i < 25; i++) answers.push(await api.call('GET', '/api/v1/regions', { apiKey: flooding.apiKey }));
    expect(answers.slice(0, 20).map((a) => a.status)).toEqual(Array(20).fill(200));
    // The budget is told once a fifth of it or less is left (4 of 20 here).
    expect(answers[14].headers['x-ratelimit-limit']).toBeUndefined();
    expect(answers[15].headers['x-ratelimit-limit']).toBe('20');
    expect(answers[15].headers['x-ratelimit-remaining']).toBe('4');
    expect(Number(answers[15].headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    expect(answers[19].headers['x-ratelimit-remaining']).toBe('0');
    const refused = answers[20];
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      status: 'error',
      error_type: 'rate_limited',
      error_msg: expect.stringContaining('budget of 20 requests a minute'),
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(answers.slice(20).every((a) => a.status === 429)).toBe(true);
    // RateLimit-Policy and RateLimit on every answer, what is left moving down to 0 and staying there.
    expect(answers.map((a) => [...told(a).keys()])).toEqual(Array(25).fill(['partner']));
    expect(answers.map((a) => told(a).get('partner')!.quota)).toEqual(Array(25).fill(20));
    expect(answers.map((a) => told(a).get('partner')!.remaining)).toEqual([
      ...Array.from({ length: 20 }, (_, i) => 19 - i),
      ...Array(5).fill(0),
    ]);
    const resets = answers.map((a) => told(a).get('partner')!.reset!);
    expect(resets).toEqual([...resets].sort((a, b) => b - a));
    expect(retryAfter).toBeGreaterThanOrEqual(told(refused).get('partner')!.reset!);
    // The v3 generation counts against the same budget.
    expect((await api.call('GET', '/api/v3/deals', { basic: basic(flooding.username, flooding.password) })).status).toBe(429);
    // Another partner, on the service's default budget (40 here), is not slowed.
    const others = await Promise.all(Array.from({ length: 40 }, () => api.call('GET', '/api/v1/regions', { apiKey: quiet.apiKey })));
    expect(others.every((a) => a.status === 200)).toBe(true);
    expect((await api.call('GET', '/api/v1/regions', { apiKey: quiet.apiKey })).status).toBe(429);
  });

  it("applies a changed budget (partners:update's command) within seconds", async () => {
    const partner = await api.createPartner('Raised', 'partner', 3);
    for (let i = 0; i < 3; i++) expect((await api.call('GET', '/api/v1/regions', { apiKey: partner.apiKey })).status).toBe(200);
    expect((await api.call('GET', '/api/v1/regions', { apiKey: partner.apiKey })).status).toBe(429);
    await api.get(CommandBus).execute(new ChangePartnerRateLimit(partner.partnerId, 1000, OPERATOR));
    await api.settle();
    // A partner found by its key is trusted for a moment (real time) without asking the view again.
    monotonic.advance(1000);
    const again = await api.call('GET', '/api/v1/regions', { apiKey: partner.apiKey });
    expect(again.status).toBe(200);
    expect(again.headers['x-ratelimit-limit']).toBeUndefined();
    expect(told(again).get('partner')).toMatchObject({ quota: 1000, remaining: 1000 - 5 });
  }, 20_000);

  it("gives each user's access tokens a budget of their own within their partner's", async () => {
    const partner = await api.createPartner('Tokens');
    const user = (await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email: 'ann@limits.test', first_name: 'Ann' } })).body
      .user_id;
    const issue = () =>
      api.call('POST', `/users/${user}/access_tokens`, {
        apiKey: partner.apiKey,
        body: { expires_in: 3600, scope: 'all', access: 'read' },
      });
    const [first, second] = [(await issue()).body.access_token.id, (await issue()).body.access_token.id];
    const asToken = (token: string) => api.call('GET', `/users/${user}`, { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 5; i++) expect((await asToken(i % 2 ? first : second)).status).toBe(200);
    const refused = await asToken(first);
    expect(refused.status).toBe(429);
    expect(refused.body.error_msg).toContain('access tokens of this user');
    // The partner's own calls go on.
    expect((await api.call('GET', `/users/${user}`, { apiKey: partner.apiKey })).status).toBe(200);
  });

  it("spends none of the partner's budget on a token's calls its own budget refuses, and tells the token nothing of the partner's", async () => {
    const partner = await api.createPartner('Narrow and wide', 'partner', 12);
    const tokenOf = async (email: string) => {
      const user = (await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email, first_name: 'Cy' } })).body.user_id;
      const issued = await api.call('POST', `/users/${user}/access_tokens`, {
        apiKey: partner.apiKey,
        body: { expires_in: 3600, scope: 'all', access: 'read' },
      });
      return () => api.call('GET', `/users/${user}`, { headers: { authorization: `Bearer ${issued.body.access_token.id}` } });
    };
    const [flooding, quiet] = [await tokenOf('cy@limits.test'), await tokenOf('di@limits.test')];
    const flood = [];
    for (let i = 0; i < 20; i++) flood.push(await flooding());
    expect(flood.map((a) => a.status)).toEqual([...Array(5).fill(200), ...Array(15).fill(429)]);
    // The partner's key has its budget but the 9 calls let through (4 of its own, 5 of the token's).
    const own = [];
    for (let i = 0; i < 4; i++) own.push(await api.call('GET', '/api/v1/regions', { apiKey: partner.apiKey }));
    expect(own.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    // Now the partner's budget refuses another user's token: a 429 with Retry-After, its own budget told as it is.
    const refused = await quiet();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.body).toEqual({ status: 'error', error_type: 'rate_limited', error_msg: expect.stringContaining('partner') });
    expect([...told(refused)].map(([name, { remaining }]) => `${name} ${remaining}`)).toEqual(['user 5']);
    // No answer to the token names the partner, its budget or what is left of it.
    for (const answer of [...flood, refused]) {
      expect([...told(answer).keys()]).toEqual(['user']);
      expect(answer.headers['x-ratelimit-limit'] ?? '5').toBe('5');
      expect(JSON.stringify(answer.headers)).not.toContain(partner.partnerId);
      const budgets = Object.entries(answer.headers).filter(([name]) => /ratelimit|retry-after/.test(name));
      const shown = JSON.stringify({ budgets, body: answer.status === 429 ? answer.body : null });
      expect(shown).not.toContain(partner.partnerId);
      expect(shown).not.toMatch(/\b12\b|"partner";/);
    }
  });

  it("tells the partner's budget in RateLimit-Policy and RateLimit on every answer of an authenticated call, errors and the 429 included", async () => {
    const partner = await api.createPartner('Told', 'partner', 9);
    const apiKey = partner.apiKey;
    const answers = [
      await api.call('GET', '/api/v1/regions', { apiKey }),
      // A handler's refusal, a validation's, a body that is not JSON, a route that does not exist.
      await api.call('GET', '/users/no-such-user', { apiKey }),
      await api.call('POST', '/users', { apiKey, body: { first_name: 'No email' } }),
      await api.call('POST', '/users', { apiKey, jsonText: '{"email":' }),
      await api.call('GET', '/no-such-call', { apiKey }),
      // Refused after counting: a test clock with live credentials, a sandbox's call with live credentials.
      await api.call('GET', '/api/v1/regions', { apiKey, headers: { 'deals-test-clock': 'clock_none' } }),
      await api.call('GET', '/v1/test_clocks', { apiKey }),
      // v3 spends the same budget.
      await api.call('GET', '/api/v3/deals', { basic: basic(partner.username, partner.password) }),
      await api.call('GET', '/api/v1/regions', { apiKey }),
      await api.call('GET', '/api/v1/regions', { apiKey }),
      await api.call('GET', '/api/v1/regions', { apiKey }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 404, 422, 422, 404, 403, 403, 200, 200, 429, 429]);
    for (const answer of answers) expect(answer.headers['ratelimit-policy']).toBe('"partner";q=9;w=60');
    expect(answers.map((a) => told(a).get('partner')!.remaining)).toEqual([8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0]);
    const refused = answers[9];
    expect(refused.body.error_type).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(told(refused).get('partner')!.reset!);
    // The X- fields as before: once a fifth of the budget or less is left.
    expect(answers.map((a) => a.headers['x-ratelimit-remaining'])).toEqual([...Array(7).fill(undefined), '1', '0', '0', '0']);
  });

  it("adds the user's tokens' budget on a call made with an access token, the 429 of that budget included", async () => {
    const partner = await api.createPartner('Told tokens');
    const user = (await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email: 'bo@limits.test', first_name: 'Bo' } })).body
      .user_id;
    const issued = await api.call('POST', `/users/${user}/access_tokens`, {
      apiKey: partner.apiKey,
      body: { expires_in: 3600, scope: 'all', access: 'read' },
    });
    expect(told(issued).get('partner')).toMatchObject({ quota: 40, remaining: 38 });
    const asToken = () => api.call('GET', `/users/${user}`, { headers: { authorization: `Bearer ${issued.body.access_token.id}` } });
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await asToken());
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
    // The token is told its own budget: the partner's is not its business while most of it is left.
    for (const answer of answers) expect(answer.headers['ratelimit-policy']).toBe('"user";q=5;w=60');
    expect(answers.map((a) => [...told(a)].map(([name, { remaining }]) => `${name} ${remaining}`))).toEqual([
      ['user 4'],
      ['user 3'],
      ['user 2'],
      ['user 1'],
      ['user 0'],
      ['user 0'],
    ]);
    expect(Number(answers[5].headers['retry-after'])).toBeGreaterThanOrEqual(told(answers[5]).get('user')!.reset!);
    // The partner's own calls tell its budget alone.
    expect([...told(await api.call('GET', `/users/${user}`, { apiKey: partner.apiKey })).keys()]).toEqual(['partner']);
  });

  it("tells a sandbox's test key its own budget, apart from its live partner's", async () => {
    const partner = await api.createPartner('Told sandbox', 'partner', 2);
    const test = partner.sandbox!.apiKey;
    expect(test.startsWith('dk_test_')).toBe(true);
    const live = [];
    for (let i = 0; i < 3; i++) live.push(await api.call('GET', '/api/v1/regions', { apiKey: partner.apiKey }));
    expect(live.map((a) => [a.status, told(a).get('partner')!.remaining])).toEqual([
      [200, 1],
      [200, 0],
      [429, 0],
    ]);
    // The sandbox's budget is the service's default here (40), counted apart from the live one's.
    const sandbox = [];
    for (let i = 0; i < 3; i++) sandbox.push(await api.call('GET', '/api/v1/regions', { apiKey: test }));
    expect(
      sandbox.map((a) => [a.status, a.headers['deals-livemode'], a.headers['ratelimit-policy'], told(a).get('partner')!.remaining]),
    ).toEqual([
      [200, 'false', '"partner";q=40;w=60', 39],
      [200, 'false', '"partner";q=40;w=60', 38],
      [200, 'false', '"partner";q=40;w=60', 37],
    ]);
    const v3 = await api.call('GET', '/api/v3/deals', { basic: basic(partner.sandbox!.username, partner.sandbox!.password) });
    expect([v3.status, told(v3).get('partner')!.remaining]).toEqual([200, 36]);
  });

  it('gives neither field to an answer whose credentials were not accepted, nor to a call without credentials', async () => {
    const partner = await api.createPartner('Untold');
    const answers = [
      await api.call('GET', '/api/v1/regions', { apiKey: `dk_${'w'.repeat(30)}` }),
      await api.call('GET', '/api/v1/regions'),
      await api.call('GET', '/api/v3/deals', { basic: basic(partner.username, 'wrong') }),
      await api.call('GET', '/health', { apiKey: partner.apiKey }),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 200]);
    for (const answer of answers) expect([answer.headers['ratelimit-policy'], answer.headers.ratelimit]).toEqual([undefined, undefined]);
  });
});

describe('wrong credentials: throttled per client address and per account, over HTTPS, never refusing right ones', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await TestApi.start({ env: { AUTH_FAILURES_PER_ADDRESS: '12', AUTH_FAILURES_PER_ACCOUNT: '5' } });
  });
  afterAll(() => api.close());

  it("answers a v3 username's wrong passwords past 5 with 429 and a doubling delay, and lets the right password in all along", async () => {
    const guessed = await api.createPartner('Guessed');
    const other = await api.createPartner('Other');
    for (let i = 0; i < 5; i++)
      expect((await api.call('GET', '/api/v3/deals', { basic: basic(guessed.username, `guess-${i}`) })).status).toBe(401);
    const delays: number[] = [];
    for (let i = 5; i < 8; i++) {
      const refused = await api.call('GET', '/api/v3/deals', { basic: basic(guessed.username, `guess-${i}`) });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ status: 'error', error_type: 'rate_limited' });
      expect(refused.body.error_msg).toContain('for this account');
      // No partner is known: no budget is told.
      expect([refused.headers['ratelimit-policy'], refused.headers.ratelimit]).toEqual([undefined, undefined]);
      delays.push(Number(refused.headers['retry-after']));
    }
    expect(delays).toEqual([1, 2, 4]);
    expect((await api.call('GET', '/api/v3/deals', { basic: basic(guessed.username, guessed.password) })).status).toBe(200);
    expect((await api.call('GET', '/api/v3/deals', { basic: basic(other.username, other.password) })).status).toBe(200);
    // A partner's right credentials, however often, are never counted.
    for (let i = 0; i < 30; i++) expect((await api.call('GET', '/api/v1/regions', { apiKey: other.apiKey })).status).toBe(200);
  });

  it("throttles an address's wrong keys past 12 without ever refusing the right keys sent from it", async () => {
    const partner = await api.createPartner('Behind the same address');
    // 8 failures are already counted for this address by the test above.
    for (let i = 0; i < 4; i++) expect((await api.call('GET', '/api/v1/regions', { apiKey: `dk_${i}${'x'.repeat(20)}` })).status).toBe(401);
    for (let i = 0; i < 20; i++) {
      const wrong = await api.call('GET', '/api/v1/regions', { apiKey: `dk_old${i}${'y'.repeat(20)}` });
      expect(wrong.status).toBe(429);
      expect(wrong.body.error_msg).toContain('from this address');
      expect((await api.call('GET', '/api/v1/regions', { apiKey: partner.apiKey })).status).toBe(200);
    }
    const last = await api.call('GET', '/api/v1/regions', { apiKey: 'dk_zzzzzzzzzzzzzzzzzzzzzz' });
    expect(Number(last.headers['retry-after'])).toBe(900);
  });

  it('refuses the operator (a password a person chose) from an address past its limit before checking the password', async () => {
    const operatorPassword = (await import('@deals/runtime')).operatorPassword(api.get((await import('@deals/runtime')).ServiceConfig));
    const asOperator = (password: string) =>
      api.call('GET', '/admin/jobs', { headers: { authorization: `Basic ${Buffer.from(`operator:${password}`).toString('base64')}` } });
    // The address is past its limit from the tests above.
    const refused = await asOperator(operatorPassword);
    expect(refused.status).toBe(429);
    expect(refused.body.error_msg).toContain('from this address');
  });
});

describe('wrong credentials behind the TLS proxy: counted by the address the proxy appended', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await TestApi.start({ env: { BEHIND_TLS_PROXY: 'on', AUTH_FAILURES_PER_ADDRESS: '3' } });
  });
  afterAll(() => api.close());

  /** A call as the proxy forwards it: plain HTTP, `X-Forwarded-Proto: https`, the client's X-Forwarded-For with the peer appended. */
  const forwarded = async (forwardedFor: string, apiKey: string) => {
    const reply = await request(`http://127.0.0.1:${api.port}/api/v1/regions?api_key=${apiKey}`, {
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': forwardedFor },
    });
    await reply.body.dump();
    return reply.statusCode;
  };

  it('throttles a client whatever it writes before the entry the proxy appended', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await forwarded(`198.51.100.${i + 1}, 203.0.113.7`, `dk_wrong${i}${'x'.repeat(20)}`));
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect(await forwarded('203.0.113.8', `dk_other${'x'.repeat(20)}`)).toBe(401);
  });
});
