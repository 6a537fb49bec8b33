import { request } from 'undici';
import { TestApi } from '../../support/api-harness';
import { InsecureHttps } from '../../support/insecure-https';

const WRITES = ['put', 'post', 'delete', 'patch'] as const;

/**
 * The interface's own calls, which stay as lenient as the interface is: a field they do not describe
 * is left alone, so that existing clients keep working.
 */
const INTERFACE_WRITES = new Set([
  'POST /users',
  'PUT /users/{user_id}',
  'PUT /api/v1/users/{email}/update_by_email',
  'POST /users/{user}/access_tokens',
  'POST /credit_cards',
  'PUT /credit_cards/{credit_card_id}/default',
  'POST /purchases/reserve',
  'POST /purchases',
  'POST /v1/purchases/full.json',
  'PUT /purchases/{purchase_id}/claim',
  'PUT /purchases/{purchase_id}/claim.json',
  'PUT /purchases/{purchase_id}/release',
  'PUT /purchases/{purchase_id}/release.json',
  'PUT /users/{user_id}/coupons/{coupon_id}/redeem',
  'PUT /coupons/{coupon_id}/redeem',
  'POST /api/v3/resellers/purchases',
  'POST /api/v3/resellers/purchases.json',
  'DELETE /api/v3/coupons/{coupon_id}/cancel',
  'POST /card_links',
  'PUT /card_links/{card_link_id}/unlink',
  'PUT /card_links/{card_link_id}/link',
  'PUT /card_links/{card_link_id}/redeem',
  'POST /saved_deals',
  'DELETE /saved_deals/{saved_deal_id}',
  'POST /users/{user_id}/subscriptions',
  'PUT /subscriptions/{subscription_id}',
  'POST /v1/targeted_email/batches',
  'DELETE /v1/targeted_email/batches/{batch_id}',
]);

const UNKNOWN = { status: 'error', error_type: 'validation_failed' };

/**
 * Every call the service added beside the interface refuses a body field it does not describe (422
 * naming it), as payment APIs answer "unknown parameter"; the interface's own calls leave such a field
 * alone. Where money moves, an amount's `currency` other than the service's is refused on every call.
 */
describe('fields a call does not describe', () => {
  const insecure = new InsecureHttps();
  let api: TestApi;
  let partner: Awaited<ReturnType<TestApi['createPartner']>>;
  let operations: Array<{ method: string; path: string; callers: string[] }>;

  beforeAll(async () => {
    api = await TestApi.start();
    partner = await api.createPartner('Strict');
    const description = (await api.call('GET', '/api-docs.json')).body;
    operations = Object.entries(description.paths as Record<string, Record<string, { 'x-callers'?: string[] }>>).flatMap(([path, item]) =>
      WRITES.filter((method) => item[method]).map((method) => ({ method, path, callers: item[method]!['x-callers'] ?? [] })),
    );
  });
  afterAll(() => api.close());

  async function send(operation: { method: string; path: string; callers: string[] }, body: Record<string, unknown>) {
    const sandbox = !operation.callers.includes('partner');
    const keys = sandbox ? partner.sandbox! : partner;
    const url = new URL(operation.path.replace(/\{[^}]+\}/g, 'x0'), api.url);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (operation.path.startsWith('/api/v3'))
      headers.authorization = `Basic ${Buffer.from(`${keys.username}:${keys.password}`).toString('base64')}`;
    else url.searchParams.set('api_key', keys.apiKey);
    const reply = await request(url, {
      method: operation.method.toUpperCase() as never,
      headers,
      body: JSON.stringify(body),
      dispatcher: insecure,
    });
    const text = await reply.body.text();
    return { status: reply.statusCode, body: text ? JSON.parse(text) : null };
  }

  const namesUnknown = (body: { errors?: Array<{ field?: string; message: string }> } | null, field: string) =>
    (body?.errors ?? []).some((issue) => issue.field === field && issue.message === 'is not a parameter of this call');

  it('refuses them on every call added beside the interface, naming each, and leaves them alone on the interface’s own', async () => {
    const added = operations.filter((o) => !o.callers.includes('anyone') && !INTERFACE_WRITES.has(`${o.method.toUpperCase()} ${o.path}`));
    expect(added.length).toBeGreaterThanOrEqual(15);
    const wrong: string[] = [];
    for (const operation of added) {
      const reply = await send(operation, { amount: 100, surplus_field: 'x' });
      if (reply.status !== 422 || !namesUnknown(reply.body, 'amount') || !namesUnknown(reply.body, 'surplus_field'))
        wrong.push(`${operation.method.toUpperCase()} ${operation.path}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
    }
    for (const operation of operations.filter((o) => INTERFACE_WRITES.has(`${o.method.toUpperCase()} ${o.path}`))) {
      const reply = await send(operation, { surplus_field: 'x' });
      if (namesUnknown(reply.body, 'surplus_field')) wrong.push(`${operation.method.toUpperCase()} ${operation.path} refused it`);
    }
    expect(wrong).toEqual([]);
  });

  it('does not refund all the coupons when asked for an amount it does not take', async () => {
    const reply = await api.call('POST', '/purchases/x0/refunds', {
      apiKey: partner.apiKey,
      body: { reason: 'requested_by_customer', amount: 100 },
    });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({
      ...UNKNOWN,
      error_msg: expect.any(String),
      errors: [{ type: 'invalid', resource: 'refund', field: 'amount', message: 'is not a parameter of this call' }],
    });
  });

  it.each([
    ['POST', '/purchases'],
    ['POST', '/v1/purchases/full.json'],
    ['PUT', '/card_links/x0/redeem'],
    ['PUT', '/card_links/x0/transactions/t-1'],
    ['POST', '/api/v3/resellers/purchases'],
  ])('refuses a currency other than US dollars on %s %s, and takes usd (or null)', async (method, path) => {
    const credentials = path.startsWith('/api/v3')
      ? { basic: { username: partner.username, password: partner.password } }
      : { apiKey: partner.apiKey };
    const eur = await api.call(method, path, { ...credentials, body: { currency: 'EUR' } });
    expect(eur.status).toBe(422);
    expect(eur.body.errors).toContainEqual(
      expect.objectContaining({ field: 'currency', message: 'must be usd: every amount is in US cents' }),
    );
    for (const currency of ['usd', 'USD', null]) {
      const taken = await api.call(method, path, { ...credentials, body: { currency } });
      expect((taken.body.errors ?? []).filter((issue: { field?: string }) => issue.field === 'currency')).toEqual([]);
    }
  });
});
