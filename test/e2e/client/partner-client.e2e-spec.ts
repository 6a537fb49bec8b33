import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetch as undiciFetch } from 'undici';
import { createDealsClient, type DealsClient, type Error as ErrorBody } from '../../../clients/typescript/src';
import { TestApi } from '../../support/api-harness';
import { TEST_CARDS } from '../../support/test-cards';
import { InsecureHttps } from '../../support/insecure-https';

/** The demo partner's credentials, as the first start writes them (README, "Five minutes with it"). */
interface DemoPartner {
  api_key: string;
  username: string;
  password: string;
}

// The service's certificate is self-signed: this fetch trusts it (a partner's code uses the global fetch).
const insecure = new InsecureHttps();
async function trustingFetch(request: Request): Promise<Response> {
  const body = request.body ? await request.arrayBuffer() : undefined;
  const answer = await undiciFetch(request.url, { method: request.method, headers: [...request.headers], body, dispatcher: insecure });
  const text = answer.status === 204 ? null : await answer.arrayBuffer();
  return new Response(text, { status: answer.status, statusText: answer.statusText, headers: [...answer.headers] });
}

/** An answer the client read as an error: its status and error body. */
const failure = (result: { error?: ErrorBody; response: Response }) => ({
  status: result.response.status,
  error_type: result.error?.error_type,
  has_message: typeof result.error?.error_msg === 'string' && result.error.error_msg.length > 0,
});

/**
 * A partner's integration written only against the generated client (clients/typescript): it lists
 * deals, makes a user, stores a card, buys, reserves and claims, redeems a coupon, links a card, and
 * reads the error bodies, against the real service over HTTPS with the demo partner's credentials.
 * Every answer is also checked against the API description the client was generated from.
 */
describe('the generated TypeScript client', () => {
  let api: TestApi;
  let demo: DemoPartner;
  let deals: DealsClient;

  beforeAll(async () => {
    api = await TestApi.start({ env: { DEMO_DATA: 'on' } });
    demo = JSON.parse(readFileSync(join(api.dataDir, 'demo-partner.json'), 'utf8')) as DemoPartner;
    deals = createDealsClient({
      baseUrl: api.url,
      apiKey: demo.api_key,
      v3: { username: demo.username, password: demo.password },
      fetch: trustingFetch,
    });
    deals.use({
      async onResponse({ request, response }) {
        const text = await response.clone().text();
        api.responses.check(request.method, new URL(request.url).pathname, response.status, text ? JSON.parse(text) : undefined);
        return response;
      },
    });
  }, 120_000);
  afterAll(() => api?.close());

  it('lists deals, makes a user, stores a card, buys, reserves and claims, redeems a coupon and links a card', async () => {
    const regions = await deals.GET('/api/v1/regions');
    expect(regions.data?.regions.length).toBeGreaterThan(0);

    const listed = await deals.GET('/api/v3/deals', {
      params: { query: { fields: 'id,type,fulfillment_method,num_left', filter: 'sold_out[false]', per_page: 1000 } },
    });
    const onSale = listed.data?.deals ?? [];
    expect(onSale.length).toBeGreaterThan(0);

    // A voucher deal of which one user may still buy two units, at a price.
    let deal: { id: string; price: number } | undefined;
    for (const candidate of onSale) {
      if (!candidate.id || !['daily-deal', 'on-going'].includes(candidate.type ?? '') || candidate.fulfillment_method === 'shipped')
        continue;
      const { data } = await deals.GET('/deals/{deal_id}', { params: { path: { deal_id: candidate.id } } });
      if (data && data.deal.purchasable_number >= 2 && data.deal.current_price > 0) {
        deal = { id: data.deal.id, price: data.deal.current_price };
        break;
      }
    }
    if (!deal) throw new Error('the demo catalogue has no voucher deal on sale');

    const user = await deals.POST('/users', { body: { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' } });
    const userId = user.data!.user_id;
    const card = await deals.POST('/credit_cards', {
      body: { user_id: userId, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '10001' },
    });
    const cardId = card.data!.credit_card_id;
    const cards = await deals.GET('/credit_cards', { params: { query: { user_id: userId } } });
    expect(cards.data && 'credit_cards' in cards.data ? cards.data.credit_cards.map((c) => c.id) : []).toEqual([cardId]);

    const order = { deal_id: deal.id, quantity: 1, user_id: userId, credit_card_id: cardId, expected_price_per_unit: deal.price };
    // The dry run is an operation of its own, typed with its own answer.
    const foreseen = await deals.POST('/purchases/dry_run', { body: order });
    expect([foreseen.data?.dry_run, foreseen.data?.purchase.amount, foreseen.data?.card.credit_card_id]).toEqual([
      true,
      deal.price,
      cardId,
    ]);
    const bought = await deals.POST('/purchases', { body: order });
    // The answer type is the purchase made: read with no narrowing.
    const purchase = bought.data?.purchase;
    if (!purchase) throw new Error(`no purchase: ${JSON.stringify(bought.error)}`);
    expect([purchase.payment_state, purchase.fulfillment_state, purchase.amount]).toEqual(['charged', 'fulfilled', deal.price]);

    const reserved = await deals.POST('/purchases/reserve', { body: { deal_id: deal.id, num_bought: 1 } });
    const reservation = reserved.data!.purchase;
    expect([reservation.fulfillment_state, reservation.user_id]).toEqual(['reserved', null]);
    const claimed = await deals.PUT('/purchases/{purchase_id}/claim', {
      params: { path: { purchase_id: reservation.id } },
      body: { user_id: userId },
    });
    expect([claimed.data?.purchase.fulfillment_state, claimed.data?.purchase.user_id]).toEqual(['fulfilled', userId]);

    const couponId = purchase.coupons![0].id;
    const redeemed = await deals.PUT('/coupons/{coupon_id}/redeem', { params: { path: { coupon_id: couponId } } });
    expect(redeemed.data?.coupon.state).toBe('redeemed');
    const again = await deals.PUT('/coupons/{coupon_id}/redeem', { params: { path: { coupon_id: couponId } } });
    expect(failure(again)).toEqual({ status: 422, error_type: 'validation_failed', has_message: true });
    const coupons = await deals.GET('/users/{user_id}/coupons', { params: { path: { user_id: userId }, query: { filter: 'valid' } } });
    expect(coupons.data && 'coupons' in coupons.data ? coupons.data.coupons.length : -1).toBe(claimed.data!.purchase.coupons!.length);

    const cardLinked = onSale.find((d) => d.type === 'card-linked' && d.id);
    if (!cardLinked?.id) throw new Error('the demo catalogue has no card-linked deal on sale');
    const linked = await deals.POST('/card_links', { body: { user_id: userId, deal_id: cardLinked.id } });
    const link = linked.data && 'card_link' in linked.data ? linked.data.card_link : undefined;
    expect([link?.deal_id, link?.user_id, link?.state]).toEqual([cardLinked.id, userId, 'linked']);
  });

  it('reads the other refusals as the error body: not found, invalid, wrong credentials', async () => {
    expect(failure(await deals.GET('/deals/{deal_id}', { params: { path: { deal_id: 'no-such-deal' } } }))).toEqual({
      status: 404,
      error_type: 'find_failed',
      has_message: true,
    });
    const missing = await deals.POST('/users', { body: { email: 'not an email' } });
    expect(failure(missing)).toEqual({ status: 422, error_type: 'validation_failed', has_message: true });
    expect(missing.error?.errors?.map((e) => e.field)).toContain('email');

    const wrongKey = createDealsClient({ baseUrl: api.url, apiKey: 'not-a-key', fetch: trustingFetch });
    expect(failure(await wrongKey.GET('/api/v1/regions'))).toEqual({ status: 401, error_type: 'unauthorized', has_message: true });
    const wrongPassword = createDealsClient({ baseUrl: api.url, v3: { username: demo.username, password: 'wrong' }, fetch: trustingFetch });
    expect(failure(await wrongPassword.GET('/api/v3/deals', { params: { query: { fields: 'id' } } }))).toEqual({
      status: 401,
      error_type: 'unauthorized',
      has_message: true,
    });
  });
});
