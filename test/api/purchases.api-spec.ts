import { ApiRequest, ApiSpec } from '../support/api-spec';
import { chicago, spaDay } from '../support/catalogue-fixtures';
import { DECLINED_TEST_CARD, TEST_CARDS } from '../support/test-cards';

/**
 * POST /purchases at the API level: the application's handlers over a log in memory (no process,
 * no socket). Each case buys a deal of its own, so that the cases stand alone in any order.
 */
describe('POST /purchases (API tier)', () => {
  let api: ApiSpec;
  let apiKey: string;
  let userId: string;
  const cards: Record<'visa' | 'declined', string> = { visa: '', declined: '' };

  beforeAll(async () => {
    api = await ApiSpec.build();
    ({ apiKey } = await api.givenPartner());
    await api.givenCatalogue(
      [chicago],
      [
        { ...spaDay, id: 'spa-card', quantity: 10, max_per_user: undefined },
        { ...spaDay, id: 'spa-declined', quantity: 10, max_per_user: undefined },
        { ...spaDay, id: 'spa-few', quantity: 2, max_per_user: undefined },
        { ...spaDay, id: 'spa-limited', quantity: 10, max_per_user: 2 },
        { ...spaDay, id: 'spa-keyed', quantity: 10, max_per_user: undefined },
      ],
    );
    userId = (await api.send({ method: 'POST', url: '/users', apiKey, body: { email: 'buyer@example.com' } })).body.user_id;
    for (const [name, number] of [
      ['visa', TEST_CARDS.visa],
      ['declined', DECLINED_TEST_CARD],
    ] as const) {
      const card = { user_id: userId, number, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
      cards[name] = (await api.send({ method: 'POST', url: '/credit_cards', apiKey, body: card })).body.credit_card_id;
    }
  });
  afterAll(() => api.close());

  const buy = (dealId: string, options: { quantity?: number; card?: string; headers?: Record<string, string> } = {}): ApiRequest => ({
    method: 'POST',
    url: '/purchases',
    apiKey,
    headers: options.headers,
    body: {
      deal_id: dealId,
      quantity: options.quantity ?? 1,
      user_id: userId,
      credit_card_id: options.card ?? cards.visa,
      expected_price_per_unit: 4900,
    },
  });

  it('charges a stored card, answers the purchase with its coupons, and appends the sale to each stream it concerns', async () => {
    const bought = await api.when(buy('spa-card', { quantity: 2 }));
    const id: string = bought.body.purchase?.id;
    bought.thenAnswers(200, {
      status: 'success',
      purchase: {
        id,
        deal_id: 'spa-card',
        user_id: userId,
        credit_card_id: cards.visa,
        amount: 9800,
        number_bought: 2,
        payment_state: 'charged',
        fulfillment_state: 'fulfilled',
        coupons: [
          { id: `${id}-1`, deal_id: 'spa-card', state: 'valid' },
          { id: `${id}-2`, deal_id: 'spa-card', state: 'valid' },
        ],
      },
    });
    expect(bought.body.purchase.coupons).toHaveLength(2);
    bought.thenEvents({
      'inventory-spa-card': ['UnitsHeld', 'UnitsSold'],
      [`usercharge-${userId}`]: ['ChargeBegun', 'ChargeEnded'],
      [`purchase-${id}`]: ['PurchaseReserved', 'PurchasePaid'],
      [`coupon-${id}-1`]: ['CouponIssued'],
      [`coupon-${id}-2`]: ['CouponIssued'],
    });
  });

  it('answers a declined card 422, gives the held units back and records the purchase not paid', async () => {
    const declined = await api.when(buy('spa-declined', { card: cards.declined }));
    declined.thenAnswers(422, { status: 'error', error_type: 'declined' });
    const [reserved] = declined.events.filter((e) => e.type === 'PurchaseReserved');
    declined.thenEvents({
      'inventory-spa-declined': ['UnitsHeld', 'UnitsReleased'],
      [`usercharge-${userId}`]: ['ChargeBegun', 'ChargeEnded'],
      [reserved.streamId]: ['PurchaseReserved', 'PurchaseNotPaid'],
    });
    expect((await api.send({ method: 'GET', url: '/deals/spa-declined', apiKey })).body.deal.num_left).toBe(10);
  });

  it('answers a deal whose units were all sold 422, and appends nothing', async () => {
    const hold = { dealId: 'spa-few', holdId: 'earlier', quantity: 2, expiresAt: '2026-06-15T12:05:00.000Z' };
    await api.given(
      { streamId: 'inventory-spa-few', type: 'UnitsHeld', data: hold },
      { streamId: 'inventory-spa-few', type: 'UnitsSold', data: hold },
    );
    expect((await api.send({ method: 'GET', url: '/deals/spa-few', apiKey })).body.deal.num_left).toBe(0);
    const refused = await api.when(buy('spa-few'));
    refused.thenAnswers(422, { status: 'error', error_type: 'cannot_fufill' });
    expect(refused.body.error_msg).toMatch(/sold out/);
    refused.thenEvents({});
  });

  it("answers a purchase past the deal's limit per user 422, counting what the user bought before, and appends nothing", async () => {
    expect((await api.send(buy('spa-limited', { quantity: 2 }))).status).toBe(200);
    const refused = await api.when(buy('spa-limited'));
    refused.thenAnswers(422, { status: 'error', error_type: 'cannot_fufill', error_msg: 'at most 2 per user; already bought 2' });
    refused.thenEvents({});
  });

  it('answers a repeat of an Idempotency-Key with the same purchase, marked replayed, and appends nothing more', async () => {
    const key = { 'idempotency-key': 'api-tier-1' };
    const first = await api.when(buy('spa-keyed', { headers: key }));
    first.thenAnswers(200, { purchase: { payment_state: 'charged', number_bought: 1 } });
    const id: string = first.body.purchase.id;
    // The key's own stream, named by a digest of the partner and the key.
    const [started] = first.events.filter((e) => e.type === 'KeyedPurchaseStarted');
    first.thenEvents({
      'inventory-spa-keyed': ['UnitsHeld', 'UnitsSold'],
      [`usercharge-${userId}`]: ['ChargeBegun', 'ChargeEnded'],
      [`purchase-${id}`]: ['PurchaseReserved', 'PurchasePaid'],
      [started.streamId]: ['KeyedPurchaseStarted'],
      [`coupon-${id}-1`]: ['CouponIssued'],
    });
    const again = await api.when(buy('spa-keyed', { headers: key }));
    again.thenAnswers(200, first.body);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    again.thenEvents({});
    expect((await api.send({ method: 'GET', url: '/deals/spa-keyed', apiKey })).body.deal.num_left).toBe(9);
  });
});
