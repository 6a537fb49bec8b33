import { StreamAppend } from '@deals/kernel';
import { ApiSpec } from '../support/api-spec';
import { chicago, spaDay } from '../support/catalogue-fixtures';

/**
 * PUT /purchases/:id/claim at the API level, for a reservation whose hold lapsed or was released:
 * the sale is one unit of work (fresh units held and sold, the claim recorded, its coupons issued,
 * all in one append), so that no stop between two writes leaves units sold to no purchase.
 */
describe('PUT /purchases/:id/claim of a lapsed or released reservation (API tier)', () => {
  let api: ApiSpec;
  let apiKey: string;
  let userId: string;
  /** Each append the log takes: the streams it writes. */
  let appends: string[][];

  beforeAll(async () => {
    api = await ApiSpec.build();
    ({ apiKey } = await api.givenPartner());
    await api.givenCatalogue(
      [chicago],
      [
        { ...spaDay, id: 'spa-lapsing', quantity: 10, max_per_user: undefined },
        { ...spaDay, id: 'spa-released', quantity: 10, max_per_user: undefined },
        { ...spaDay, id: 'spa-pausing', quantity: 10, max_per_user: undefined },
      ],
    );
    userId = (await api.send({ method: 'POST', url: '/users', apiKey, body: { email: 'claimer@example.com' } })).body.user_id;
    // The log's own appends, watched (each written as the store writes it).
    const store = api.stored;
    const appendToStreams = store.appendToStreams.bind(store);
    store.appendToStreams = (batch: readonly StreamAppend[]) => {
      appends.push(batch.map((a) => a.streamId));
      return appendToStreams(batch);
    };
    const append = store.append.bind(store);
    store.append = (streamId, events, expected) => {
      appends.push([streamId]);
      return append(streamId, events, expected);
    };
  });
  beforeEach(() => (appends = []));
  afterAll(() => api.close());

  const reserve = async (dealId: string): Promise<string> =>
    (await api.send({ method: 'POST', url: '/purchases/reserve', apiKey, body: { deal_id: dealId, num_bought: 2 } })).body.purchase.id;
  const claim = (id: string) => api.when({ method: 'PUT', url: `/purchases/${id}/claim`, apiKey, body: { user_id: userId } });

  it('sells fresh units in place of a lapsed hold in one append, and a claim again writes nothing', async () => {
    const id = await reserve('spa-lapsing');
    api.clock.advance(5 * 60_000 + 1000);
    appends = [];
    const claimed = await claim(id);
    claimed.thenAnswers(200, { purchase: { id, user_id: userId, payment_state: 'charged', fulfillment_state: 'fulfilled' } });
    claimed.thenEvents({
      'inventory-spa-lapsing': ['UnitsHeld', 'UnitsSold'],
      [`purchase-${id}`]: ['PurchaseClaimed'],
      [`coupon-${id}-1`]: ['CouponIssued'],
      [`coupon-${id}-2`]: ['CouponIssued'],
    });
    expect(claimed.events.filter((e) => e.streamId === 'inventory-spa-lapsing').map((e) => (e.data as { holdId: string }).holdId)).toEqual([
      `${id}-r`,
      `${id}-r`,
    ]);
    expect(appends).toEqual([['inventory-spa-lapsing', `purchase-${id}`, `coupon-${id}-1`, `coupon-${id}-2`]]);

    // Its retry (a client that never got the answer) finds the sale recorded: the same answer, no write.
    appends = [];
    const again = await claim(id);
    again.thenAnswers(200, { purchase: { id, fulfillment_state: 'fulfilled' } });
    again.thenEvents({});
    expect(appends).toEqual([]);
    expect((await api.send({ method: 'GET', url: '/deals/spa-lapsing', apiKey })).body.deal).toMatchObject({ number_sold: 2, num_left: 8 });
  });

  it('sells fresh units in place of a released reservation in one append', async () => {
    const id = await reserve('spa-released');
    expect((await api.send({ method: 'PUT', url: `/purchases/${id}/release`, apiKey })).status).toBe(200);
    appends = [];
    const claimed = await claim(id);
    claimed.thenAnswers(200, { purchase: { id, fulfillment_state: 'fulfilled' } });
    expect(appends).toEqual([['inventory-spa-released', `purchase-${id}`, `coupon-${id}-1`, `coupon-${id}-2`]]);
  });

  it('refuses a lapsed reservation of a deal no longer on sale, and writes nothing', async () => {
    const id = await reserve('spa-pausing');
    await api.givenCatalogue([chicago], [{ ...spaDay, id: 'spa-pausing', quantity: 10, max_per_user: undefined, state: 'paused' }]);
    api.clock.advance(5 * 60_000 + 1000);
    appends = [];
    const refused = await claim(id);
    refused.thenAnswers(422, { status: 'error', error_type: 'cannot_fufill', error_msg: 'the deal is not on sale' });
    refused.thenEvents({});
    expect(appends).toEqual([]);
  });
});
