import { OPERATOR } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { CommandBus } from '@nestjs/cqrs';
import { request } from 'undici';
import { TestApi } from '../../support/api-harness';
import { SiteClient } from '../../support/site-client';
import { InsecureHttps } from '../../support/insecure-https';

const PASSWORD = 'a long enough passphrase';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
type Kind = 'none' | 'member_session' | 'partner' | 'sandbox' | 'auditor' | 'user_token';

interface Operation {
  method: string;
  path: string;
  callers: string[];
}

/**
 * Who may call each route is declared once, beside it (`@CalledBy`), and published in the API
 * description as `x-callers`. Walks every operation of the description with every kind of
 * credentials (none, a partner-site member's session, a partner's live key, its sandbox's test key,
 * an auditor's key, a user's access token of the widest scope) and holds each answer to the
 * declaration: a kind it names is never refused (401, 403), every other kind is.
 */
describe('who may call each route', () => {
  const insecure = new InsecureHttps();
  let api: TestApi;
  let operations: Operation[];
  let credentials: Record<Exclude<Kind, 'none'>, { query?: Record<string, string>; headers?: Record<string, string> }>;
  let tokenUser: string;

  beforeAll(async () => {
    api = await TestApi.start();
    const partner = await api.createPartner('Walker');
    const auditor = await api.createPartner('Walking auditor', 'auditor');
    tokenUser = (await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email: 'walker@callers.test' } })).body.user_id;
    const token = await api.call('POST', `/users/${tokenUser}/access_tokens`, {
      apiKey: partner.apiKey,
      body: { expires_in: 3600, scope: 'all', access: 'read,write' },
    });
    const invited = await api.get(CommandBus).execute(new InviteMember(partner.partnerId, 'member@callers.test', OPERATOR));
    await api.settle();
    const site = new SiteClient(api.url);
    await site.submit(`/partner/sign-up?token=${invited.token}`, '/partner/sign-up', {
      token: invited.token,
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect((await site.signIn('member@callers.test', PASSWORD)).status).toBe(303);
    const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    const keyOrBasic = (apiKey: string, username: string, password: string) => ({
      query: { api_key: apiKey },
      headers: { authorization: basic(username, password) },
    });
    const sandbox = partner.sandbox!;
    credentials = {
      member_session: { headers: { cookie: [...site.jar].map(([k, v]) => `${k}=${v}`).join('; ') } },
      partner: keyOrBasic(partner.apiKey, partner.username, partner.password),
      sandbox: keyOrBasic(sandbox.apiKey, sandbox.username, sandbox.password),
      auditor: keyOrBasic(auditor.apiKey, auditor.username, auditor.password),
      user_token: { headers: { authorization: `Bearer ${token.body.access_token.id}` } },
    };
    const description = (await api.call('GET', '/api-docs.json')).body;
    operations = Object.entries(description.paths as Record<string, Record<string, { 'x-callers'?: string[] }>>).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({ method, path, callers: item[method]!['x-callers'] ?? [] })),
    );
  });
  afterAll(() => api.close());

  /**
   * A concrete address for an operation: ids that name nothing (no call changes a record), but for a
   * user's token the path's user is the token's own (another user is not found before its scope is judged).
   */
  const address = (path: string, kind: Kind) =>
    (kind === 'user_token' ? path.replace(/\{(user_id|user)\}/g, tokenUser) : path).replace(/\{[^}]+\}/g, 'x0');

  async function send(operation: Operation, kind: Kind): Promise<{ status: number; body: string }> {
    const url = new URL(address(operation.path, kind), api.url);
    const given = kind === 'none' ? {} : credentials[kind];
    // Basic credentials on v3 and the auditor's pages, the key elsewhere: as each path takes them.
    const basic = operation.path.startsWith('/api/v3') || operation.path.startsWith('/audit/pages/');
    for (const [name, value] of Object.entries(basic ? {} : (given.query ?? {}))) url.searchParams.set(name, value);
    const headers: Record<string, string> = { ...given.headers };
    if (!basic && headers.authorization?.startsWith('Basic ')) delete headers.authorization;
    const writes = operation.method !== 'get';
    if (writes) headers['content-type'] = 'application/json';
    const reply = await request(url, {
      method: operation.method.toUpperCase() as never,
      headers,
      body: writes ? '{}' : undefined,
      dispatcher: insecure,
    });
    return { status: reply.statusCode, body: await reply.body.text() };
  }

  it('declares the callers of every operation', () => {
    expect(operations.length).toBeGreaterThan(80);
    const undeclared = operations.filter((o) => o.callers.length === 0).map((o) => `${o.method} ${o.path}`);
    expect(undeclared).toEqual([]);
    for (const operation of operations) {
      if (operation.callers.includes('anyone')) expect([operation.path, operation.callers]).toEqual([operation.path, ['anyone']]);
    }
  });

  it('lets each declared kind call, and refuses every other kind (401 without API credentials, 403 with the wrong kind)', async () => {
    const wrong: string[] = [];
    for (const operation of operations) {
      const anyone = operation.callers.includes('anyone');
      for (const kind of ['none', 'member_session', 'partner', 'sandbox', 'auditor', 'user_token'] as Kind[]) {
        const { status, body } = await send(operation, kind);
        const refused = status === 401 || status === 403;
        // An auditor named on a call still only reads: a write is refused.
        const allowed = anyone || (operation.callers.includes(kind) && !(kind === 'auditor' && operation.method !== 'get'));
        // Without API credentials, or with a token where only basic credentials are read (v3): 401.
        const unauthenticated =
          kind === 'none' || kind === 'member_session' || (kind === 'user_token' && operation.path.startsWith('/api/v3'));
        const expected = allowed ? 'allowed' : unauthenticated ? 401 : 403;
        const got = !refused ? 'allowed' : status;
        if (got !== expected) wrong.push(`${operation.method.toUpperCase()} ${operation.path} as ${kind}: ${status} ${body.slice(0, 160)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("refuses a user's token on a card link's redemption: its clearing is the partner's word, and nothing is recorded", async () => {
    const redeem = operations.find((o) => o.path === '/card_links/{card_link_id}/redeem' && o.method === 'put')!;
    expect(redeem.callers).toEqual(['partner', 'sandbox']);
    const reply = await send(redeem, 'user_token');
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body)).toEqual({
      status: 'error',
      error_type: 'forbidden',
      error_msg: 'this call takes partner credentials, not a user access token',
    });
  });
});
