import { MAX_ISSUES, OPERATOR } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { MAX_ERROR_MESSAGE, MAX_JSON_DEPTH } from '@deals/wire';
import { CommandBus } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { TestApi } from '../../support/api-harness';
import { postInPieces } from '../../support/piecewise-post';
import { inputValue, SiteClient } from '../../support/site-client';
import { InsecureHttps } from '../../support/insecure-https';

const insecure = new InsecureHttps();
const PASSWORD = 'a long and private passphrase';
const OPERATOR_PASSWORD = 'operator password of the hostile-input suite';

/** What a client sends is never echoed, walked or kept without a bound; a secret shown once is never shown again by a repeat. */
describe('hostile input: bodies nested deep, echoes, kept answers and secrets shown once', () => {
  let api: TestApi;
  let partner: Awaited<ReturnType<TestApi['createPartner']>>;
  beforeAll(async () => {
    api = await TestApi.start({ env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', OPERATOR_PASSWORD } });
    partner = await api.createPartner('Hostile');
  });
  afterAll(() => api.close());

  const keyed = (method: string, path: string, key: string, options: { body?: unknown; jsonText?: string } = {}) =>
    api.call(method, path, { apiKey: partner.apiKey, ...options, headers: { 'idempotency-key': key } });
  const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it('refuses a body nested deeper than the limit with 400 before any work, with a key or without', async () => {
    const deep = `{"email":"deep@example.com","partner_data":{"x":${nestedArrays(10_000)}}}`;
    const key = randomUUID();
    for (const reply of [
      await keyed('POST', '/users', key, { jsonText: deep }),
      await api.call('POST', '/users', { apiKey: partner.apiKey, jsonText: deep }),
    ]) {
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ status: 'error', error_type: 'bad_request' });
      expect(reply.body.error_msg).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    }
    // Refused before its key was claimed: the key still serves a request of its own.
    const created = await keyed('POST', '/users', key, { body: { email: 'deep@example.com' } });
    expect(created.status).toBe(200);
    // Within the limit, the body is read and judged on its fields.
    const withinLimit = `{"email":"shallow@example.com","partner_data":{"x":${nestedArrays(MAX_JSON_DEPTH - 3)}}}`;
    expect((await api.call('POST', '/users', { apiKey: partner.apiKey, jsonText: withinLimit })).status).toBe(422);
  });

  it('answers a 2 MiB body with its 413 every time, never a reset connection: the body is read before the close', async () => {
    const body = Buffer.from(JSON.stringify({ email: 'large@example.com', partner_data: { x: 'a'.repeat(2 * 1024 * 1024) } }));
    const headers = { 'content-type': 'application/json' };
    // Ten in a row, each on a fresh connection and sent a piece at a time.
    for (let i = 0; i < 10; i++) {
      const reply = await postInPieces(`${api.url}/users?api_key=${partner.apiKey}`, headers, body);
      expect(reply.status).toBe(413);
      expect(reply.headers.connection).toBe('close');
      expect(JSON.parse(reply.text)).toEqual({
        status: 'error',
        error_type: 'bad_request',
        error_msg: expect.stringContaining('too large'),
      });
    }
  });

  it('names none of the values a refused request sent, only how many, and keeps that small answer', async () => {
    const types = Array.from({ length: 14_000 }, (_, i) => `made.up.type.number.${i}.${'x'.repeat(40)}`);
    const body = { url: 'https://127.0.0.1:9/hook', types };
    expect(JSON.stringify(body).length).toBeGreaterThan(900_000);
    const key = randomUUID();
    const refused = await keyed('POST', '/v1/webhook_endpoints', key, { body });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body).length).toBeLessThan(4000);
    expect(refused.body.errors[0].message).toContain('names 14,000 unknown words');
    expect(JSON.stringify(refused.body)).not.toContain('made.up.type');
    const again = await keyed('POST', '/v1/webhook_endpoints', key, { body });
    expect([again.status, again.headers['idempotent-replayed'], again.body]).toEqual([422, 'true', refused.body]);
    // What the partner's keys take up is measured, and small.
    const metrics = await request(`${api.url}/metrics`, {
      dispatcher: insecure,
      headers: { authorization: `Basic ${Buffer.from(`operator:${OPERATOR_PASSWORD}`).toString('base64')}` },
    });
    const text = await metrics.body.text();
    const kept = new RegExp(`deals_idempotency_kept_bytes\\{partner="${partner.partnerId}"\\} (\\d+)`).exec(text);
    expect(Number(kept?.[1])).toBeGreaterThan(0);
    expect(Number(kept?.[1])).toBeLessThan(20_000);
  });

  it('lists at most the first problems of a request with thousands, in a message of bounded length', async () => {
    const reply = await api.call('POST', '/v1/targeted_email/batches', {
      apiKey: partner.apiKey,
      body: { deal_id: 'x', mode: 'augment', send_at: '2030-01-01T00:00:00Z', user_ids: Array.from({ length: 1000 }, (_, i) => i) },
    });
    expect(reply.status).toBe(422);
    expect(reply.body.errors.length).toBeLessThanOrEqual(MAX_ISSUES);
    expect(reply.body.error_msg.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE);
  });

  it('never answers a repeat of a call that showed a secret with the secret: the endpoint, its rotation, an access token', async () => {
    const key = randomUUID();
    const created = await keyed('POST', '/v1/webhook_endpoints', key, { body: { url: 'https://127.0.0.1:9/hook', types: ['*'] } });
    expect(created.status).toBe(201);
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^whsec_/);
    const repeated = await keyed('POST', '/v1/webhook_endpoints', key, { body: { url: 'https://127.0.0.1:9/hook', types: ['*'] } });
    expect(repeated.status).toBe(422);
    expect(repeated.headers['idempotent-replayed']).toBe('true');
    expect(repeated.body).toMatchObject({ error_type: 'idempotent_answer_not_kept', answered_status: 201 });
    expect(JSON.stringify(repeated.body)).not.toContain(secret);
    // The endpoint was made once.
    const listed = await api.call('GET', '/v1/webhook_endpoints', { apiKey: partner.apiKey });
    expect(listed.body.webhook_endpoints.filter((e: { id: string }) => e.id === created.body.webhook_endpoint.id)).toHaveLength(1);

    const rotateKey = randomUUID();
    const path = `/v1/webhook_endpoints/${created.body.webhook_endpoint.id}/rotate_secret`;
    const rotated = await keyed('POST', path, rotateKey);
    expect(rotated.status).toBe(200);
    const rotatedAgain = await keyed('POST', path, rotateKey);
    expect([rotatedAgain.status, rotatedAgain.body.error_type]).toEqual([422, 'idempotent_answer_not_kept']);
    expect(JSON.stringify(rotatedAgain.body)).not.toContain(rotated.body.secret);

    const user = (await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email: 'token@example.com' } })).body.user_id;
    const tokenKey = randomUUID();
    const grant = { expires_in: 600, scope: 'user', access: 'read' };
    const token = await keyed('POST', `/users/${user}/access_tokens`, tokenKey, { body: grant });
    expect(token.status).toBe(200);
    const tokenAgain = await keyed('POST', `/users/${user}/access_tokens`, tokenKey, { body: grant });
    expect([tokenAgain.status, tokenAgain.body.error_type]).toEqual([422, 'idempotent_answer_not_kept']);
    expect(JSON.stringify(tokenAgain.body)).not.toContain(token.body.access_token.id);
  });

  it("answers a repeat of the site's forms that show a secret (a new key, a two-step key) with the page without it", async () => {
    const invited = await api.get(CommandBus).execute(new InviteMember(partner.partnerId, 'keys@example.com', OPERATOR));
    await api.settle();
    const client = new SiteClient(api.url);
    const link = `/partner/sign-up?token=${invited.token}`;
    await client.submit(link, '/partner/sign-up', { token: invited.token, password: PASSWORD, password_confirmation: PASSWORD });
    expect((await client.signIn('keys@example.com', PASSWORD)).status).toBe(303);
    const csrf = inputValue((await client.get('/partner/keys')).text, '_csrf')!;
    const key = randomUUID();
    const postForm = async (path: string, fields: Record<string, string>, idempotencyKey = key) => {
      const reply = await request(new URL(path, api.url), {
        method: 'POST',
        dispatcher: insecure,
        headers: {
          cookie: [...client.jar].map(([k, v]) => `${k}=${v}`).join('; '),
          'content-type': 'application/x-www-form-urlencoded',
          origin: new URL(api.url).origin,
          'idempotency-key': idempotencyKey,
        },
        body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
      });
      return { status: reply.statusCode, replayed: reply.headers['idempotent-replayed'], text: await reply.body.text() };
    };
    const post = () => postForm('/partner/keys', { name: 'ci' });
    const first = await post();
    expect(first.status).toBe(200);
    const apiKey = /<code id="api-key">([^<]+)<\/code>/.exec(first.text)?.[1];
    expect(apiKey).toBeDefined();
    const again = await post();
    expect([again.status, again.replayed]).toEqual([200, 'true']);
    expect(again.text).not.toContain(apiKey);
    expect(again.text).toContain('it is not shown again');

    // The two-step sign-in key of a set-up form likewise.
    const setupKey = randomUUID();
    const setup = await postForm('/partner/security/totp/start', {}, setupKey);
    const totpSecret = /Key: <code>([A-Z2-7]+)<\/code>/.exec(setup.text)?.[1];
    expect(totpSecret).toBeDefined();
    const setupAgain = await postForm('/partner/security/totp/start', {}, setupKey);
    expect([setupAgain.status, setupAgain.replayed]).toEqual([200, 'true']);
    expect(setupAgain.text).not.toContain(totpSecret);
    expect(setupAgain.text).toContain('it is not shown again');
  });
});
