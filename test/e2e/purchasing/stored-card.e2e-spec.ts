import { appendToStream, EventStore, ManualClock, NewEvent, PaymentGateway, Scheduler } from '@deals/kernel';
import { randomUUID } from 'node:crypto';
import { CouponQr } from '@deals/purchasing/coupon-images/coupon-qr';
import { chargeLockStream } from '@deals/purchasing/domain/charge-lock/charge-lock';
import { inventoryStream } from '@deals/purchasing/domain/inventory/inventory.events';
import { TestApi } from '../../support/api-harness';
import { chicago, ongoingShipped, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { holdNextCharge } from '../../support/held-charge';

describe('POST /purchases: buying with a stored card', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let userId: string;
  const cards: Record<string, string> = {};
  /** The simulated processor's documented test cards (README): approve, decline, fail. */
  const TEST_CARDS = { visa: '4242424242424242', decline: '4000000000000002', error: '4000000000000119' };
  /** Stores `number` for `user`; its credit card id. */
  const storeCard = async (user: string, number: string): Promise<string> =>
    (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: user, number, verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([
      { ...spaDay, quantity: 10, max_per_user: 4 },
      { ...spaDay, id: 'chicago-spa-expired', expires_at: '2026-06-15T11:00:00Z', quantity: 10 },
      { ...ongoingShipped, quantity: 5 },
      { ...spaDay, id: 'chicago-spa-free', current_price: 0, quantity: 10 },
      { ...spaDay, id: 'chicago-spa-relock', quantity: 10 },
      { ...spaDay, id: 'chicago-spa-decided', quantity: 10 },
      { ...spaDay, id: 'chicago-spa-priceless', current_price: Number.MAX_SAFE_INTEGER, quantity: 10, max_per_user: undefined },
    ]);
    userId = (await api.call('POST', '/users', { apiKey, body: { email: 'card-buyer@example.com' } })).body.user_id;
    for (const [name, number] of Object.entries(TEST_CARDS)) cards[name] = await storeCard(userId, number);
  });
  afterAll(() => api.close());

  const buy = (overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    api.call('POST', '/purchases', {
      apiKey,
      headers,
      body: {
        deal_id: 'chicago-spa-day',
        quantity: 1,
        user_id: userId,
        credit_card_id: cards.visa,
        expected_price_per_unit: 4900,
        ...overrides,
      },
    });
  const numLeft = async () => (await api.call('GET', '/deals/chicago-spa-day', { apiKey })).body.deal.num_left;

  it('charges the card, sells the units and issues the coupons', async () => {
    const reply = await buy({ quantity: 2, session_id: 'aff-1' });
    expect(reply.status).toBe(200);
    expect(reply.body.purchase).toMatchObject({
      payment_state: 'charged',
      fulfillment_state: 'fulfilled',
      user_id: userId,
      credit_card_id: cards.visa,
      amount: 9800,
      number_bought: 2,
    });
    expect(reply.body.purchase.coupons).toHaveLength(2);
    expect(await numLeft()).toBe(8);
  });

  it("answers from the purchase's own decision exactly what its views show next: the purchase, the user's purchases, the deal's units", async () => {
    const { status, body } = await buy({ deal_id: 'chicago-spa-decided', quantity: 2 });
    expect(status).toBe(200);
    // Read at once, with no wait of the test's own: the reads wait for the views the answer did not.
    const [shown, listed, deal] = await Promise.all([
      api.call('GET', `/purchases/${body.purchase.id}`, { apiKey }),
      api.call('GET', `/users/${userId}/purchases?per_page=50`, { apiKey }),
      api.call('GET', '/deals/chicago-spa-decided', { apiKey }),
    ]);
    expect(shown.body).toEqual(body);
    expect(listed.body.purchases).toContainEqual(body.purchase);
    expect(deal.body.deal.num_left).toBe(8);
  });

  it('answers 422 declined and releases the units when the card is declined', async () => {
    const reply = await buy({ credit_card_id: cards.decline });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ status: 'error', error_type: 'declined', error_msg: 'the card was declined: card declined' });
    expect(await numLeft()).toBe(8);
  });

  it("answers a declined card only once the deal's view shows its units back, every time", async () => {
    const seen: number[] = [];
    for (let round = 0; round < 10; round++) {
      expect((await buy({ credit_card_id: cards.decline })).status).toBe(422);
      seen.push(await numLeft());
    }
    expect(seen).toEqual(Array(10).fill(8));
  });

  it('answers 502 payment_failed, charging nothing, when the processor fails', async () => {
    const reply = await buy({ credit_card_id: cards.error });
    expect(reply.status).toBe(502);
    expect(reply.body).toMatchObject({ error_type: 'payment_failed', error_msg: 'the payment processor failed; nothing was charged' });
    expect(await numLeft()).toBe(8);
  });

  it("takes over a charge lock whose purchase is settled (its end never written: a write failed) instead of refusing the user's next purchase", async () => {
    // A buyer of its own: the deal's limit a user is the other tests'.
    const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'relocked@example.com' } })).body.user_id as string;
    const card = await storeCard(buyer, TEST_CARDS.visa);
    const first = await buy({ deal_id: 'chicago-spa-relock', user_id: buyer, credit_card_id: card });
    expect(first.status).toBe(200);
    const settled = first.body.purchase.id as string;
    // The lock's end lost: the lock stream says the settled purchase still holds it.
    await appendToStream(
      api.get(EventStore),
      chargeLockStream(buyer),
      [
        {
          id: randomUUID(),
          type: 'ChargeBegun',
          data: { userId: buyer, purchaseId: settled, at: clock.now().toISOString() },
          metadata: { occurredAt: clock.now().toISOString(), actor: 'test' },
        },
      ],
      'any',
    );
    const next = await buy({ deal_id: 'chicago-spa-relock', user_id: buyer, credit_card_id: card });
    expect(next.status).toBe(200);
    const lock = (await api.get(EventStore).readStream(chargeLockStream(buyer)))
      .slice(-4)
      .map((e) => [e.type, (e.data as { purchaseId: string }).purchaseId]);
    expect(lock).toEqual([
      ['ChargeBegun', settled],
      ['ChargeEnded', settled],
      ['ChargeBegun', next.body.purchase.id],
      ['ChargeEnded', next.body.purchase.id],
    ]);
  });

  it('answers 409 already_charging while the same user is being charged', async () => {
    // Its charge held (made, its answer kept back) until the second purchase has its answer.
    const held = holdNextCharge(api);
    const slow = buy({ credit_card_id: cards.visa });
    await held.charging;
    const inventory = () => api.get(EventStore).readStream(inventoryStream('chicago-spa-day'), 0);
    const from = (await inventory()).length;
    const second = await buy().finally(held.release);
    expect(second.status).toBe(409);
    expect(second.body).toEqual({
      status: 'error',
      error_type: 'already_charging',
      error_msg: 'an earlier purchase of this user is still being charged',
    });
    expect((await slow).status).toBe(200);
    // The refused purchase's start is one write with its lock: no hold was taken, none given back;
    // the deal's inventory has only the slow purchase's sale since.
    expect(await numLeft()).toBe(7);
    expect((await inventory()).slice(from).map((e) => e.type)).toEqual(['UnitsSold']);
    // max_per_user is 4: 2 + 1 (the slow one) are bought, so one more is allowed and then no more.
    expect((await buy()).status).toBe(200);
    expect((await buy()).body).toMatchObject({ error_type: 'cannot_fufill', error_msg: 'at most 4 per user; already bought 4' });
  });

  it('sells no vouchers that have already expired, no shipped goods without an address, and no free deal by card; nothing is charged or held', async () => {
    expect((await api.call('GET', '/deals/chicago-spa-expired', { apiKey })).body.deal).toMatchObject({
      state: 'in-flight',
      purchasable_number: 0,
    });
    const expired = await buy({ deal_id: 'chicago-spa-expired' });
    expect([expired.status, expired.body]).toEqual([
      422,
      { status: 'error', error_type: 'cannot_fufill', error_msg: "the deal's vouchers have expired" },
    ]);
    const unshipped = await buy({ deal_id: 'chicago-headphones', expected_price_per_unit: 3999 });
    expect([unshipped.status, unshipped.body.errors]).toEqual([
      422,
      [{ type: 'missing_field', resource: 'shipping_address', field: 'shipping_address', message: 'is required for a shipped deal' }],
    ]);
    const address = { name: 'Card Buyer', address_one: '1 Lake St', postal_code: '60601', city: 'Chicago', state: 'IL', country: 'US' };
    const shipped = await buy({ deal_id: 'chicago-headphones', expected_price_per_unit: 3999, shipping_address: address });
    expect(shipped.status).toBe(200);
    const free = await buy({ deal_id: 'chicago-spa-free', expected_price_per_unit: 0 });
    expect([free.status, free.body]).toEqual([
      422,
      { status: 'error', error_type: 'cannot_fufill', error_msg: 'a free deal is not bought with a card: reserve and claim it' },
    ]);
    expect((await api.call('GET', '/deals/chicago-spa-free', { apiKey })).body.deal).toMatchObject({ num_left: 10 });
    for (const id of ['chicago-spa-expired', 'chicago-headphones']) {
      expect((await api.call('GET', `/deals/${id}`, { apiKey })).body.deal).toMatchObject({
        number_sold: id === 'chicago-headphones' ? 1 : 0,
      });
    }
  });

  it('refuses, before any charge, an amount beyond exact cents (price × quantity), on every path that will charge it', async () => {
    const price = Number.MAX_SAFE_INTEGER;
    const message = `at the deal's price of ${price} cents, that many units cost more than can be charged`;
    const stored = await buy({ deal_id: 'chicago-spa-priceless', quantity: 2, expected_price_per_unit: price });
    expect([stored.status, stored.body.errors]).toEqual([422, [{ type: 'invalid', resource: 'purchase', field: 'quantity', message }]]);
    const full = await api.call('POST', '/v1/purchases/full.json', {
      apiKey,
      body: { deal_id: 'chicago-spa-priceless', quantity: 2, user_id: userId, credit_card_id: cards.visa },
    });
    expect([full.status, full.body.errors]).toEqual([422, [{ type: 'invalid', resource: 'purchase', field: 'quantity', message }]]);
    const reserved = await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: 'chicago-spa-priceless', num_bought: 2 } });
    expect([reserved.status, reserved.body.errors]).toEqual([
      422,
      [{ type: 'invalid', resource: 'purchase', field: 'num_bought', message }],
    ]);
    expect((await api.call('GET', '/deals/chicago-spa-priceless', { apiKey })).body.deal).toMatchObject({ num_left: 10, number_sold: 0 });
    // One unit's amount is exact, and is sold.
    expect((await buy({ deal_id: 'chicago-spa-priceless', quantity: 1, expected_price_per_unit: price })).status).toBe(200);
  });

  it('takes at most 1,000 units in one purchase, on every path (each unit is a coupon with its image)', async () => {
    const over = [{ type: 'invalid', resource: 'purchase', field: 'quantity', message: 'must be a whole number from 1 to 1000' }];
    expect(
      (await buy({ deal_id: 'chicago-spa-priceless', quantity: 1001, expected_price_per_unit: Number.MAX_SAFE_INTEGER })).body.errors,
    ).toEqual(over);
    expect(
      (
        await api.call('POST', '/v1/purchases/full.json', {
          apiKey,
          body: { deal_id: 'chicago-spa-day', quantity: 1001, user_id: userId, credit_card_id: cards.visa },
        })
      ).body.errors,
    ).toEqual(over);
    expect(
      (await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: 'chicago-spa-day', num_bought: 1001 } })).body.errors,
    ).toEqual([{ ...over[0], field: 'num_bought' }]);
  });

  it('refuses a stale price, a foreign card, and more than the per-user limit', async () => {
    const stale = await buy({ expected_price_per_unit: 4500 });
    expect(stale.body.errors).toEqual([
      { type: 'invalid', resource: 'purchase', field: 'expected_price_per_unit', message: "differs from the deal's current price, 4900" },
    ]);
    const other = (await api.call('POST', '/users', { apiKey, body: { email: 'someone-else@example.com' } })).body.user_id;
    const foreign = await buy({ user_id: other });
    expect(foreign.body.errors).toEqual([
      { type: 'not_owner', resource: 'credit_card', field: 'credit_card_id', message: 'is not a card of this user' },
    ]);
    const limit = await buy({ quantity: 5 });
    expect(limit.body).toMatchObject({ error_type: 'cannot_fufill' });
    const missing = await api.call('POST', '/purchases', { apiKey, body: {} });
    expect(missing.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'deal_id',
      'quantity',
      'user_id',
      'credit_card_id',
      'expected_price_per_unit',
    ]);
  });

  it('finishes a charged purchase when a write after the charge fails once: no charge without coupons', async () => {
    const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'flaky-disk@example.com' } })).body.user_id;
    const card = await storeCard(buyer, TEST_CARDS.visa);
    const store = api.get(EventStore);
    const appendToStreams = store.appendToStreams.bind(store);
    let failed = 0;
    // The first write that carries the payment fails, whether alone or with the sale's other streams (each an appendToStreams).
    const failsOnce = (events: NewEvent[]) => failed === 0 && events.some((e) => e.type === 'PurchasePaid') && ++failed === 1;
    const busy = () => Promise.reject(new Error('SQLITE_BUSY: database is locked'));
    const spyAcross = jest
      .spyOn(store, 'appendToStreams')
      .mockImplementation((appends) => (failsOnce(appends.flatMap((a) => a.events)) ? busy() : appendToStreams(appends)));
    try {
      const reply = await buy({ user_id: buyer, credit_card_id: card });
      expect(failed).toBe(1);
      expect(reply.status).toBe(200);
      expect(reply.body.purchase).toMatchObject({ payment_state: 'charged', fulfillment_state: 'fulfilled', user_id: buyer });
      expect(reply.body.purchase.coupons).toHaveLength(1);
    } finally {
      spyAcross.mockRestore();
    }
  });

  it('writes nothing of a purchase whose start is refused: no purchase, no hold, no entry of its key', async () => {
    const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'refused-start@example.com' } })).body.user_id;
    const visa = await storeCard(buyer, TEST_CARDS.visa);
    // Its charge held (made, its answer kept back) until the second purchase has its answer.
    const held = holdNextCharge(api);
    const slow = buy({ user_id: buyer, credit_card_id: visa });
    await held.charging;
    const events = api.get(EventStore);
    const before = await events.head();
    try {
      const refused = await buy({ user_id: buyer, credit_card_id: visa }, { 'Idempotency-Key': 'refused-start-1' });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ error_type: 'already_charging' });
      const written = await events.readAll({ after: before, maxCount: 1000 });
      expect(written.filter((e) => /^(purchase|keyedpurchases|inventory|usercharge)-/.test(e.streamId))).toEqual([]);
    } finally {
      held.release();
    }
    expect((await slow).status).toBe(200);
  });

  it("asks for the coupons' QR images before the card is charged, so the answer need not wait for them", async () => {
    const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'early-images@example.com' } })).body.user_id;
    const card = await storeCard(buyer, TEST_CARDS.visa);
    // The order of what happens, not its timing: the images asked for, the processor answering.
    const happened: string[] = [];
    const qr = api.get(CouponQr);
    const png = qr.png.bind(qr);
    const asked = jest.spyOn(qr, 'png').mockImplementation((code) => {
      happened.push(`image ${code}`);
      return png(code);
    });
    const gateway = api.get(PaymentGateway);
    const charge = gateway.charge.bind(gateway);
    const charged = jest.spyOn(gateway, 'charge').mockImplementation(async (request) => {
      happened.push('charge asked');
      const outcome = await charge(request);
      happened.push('charge answered');
      return outcome;
    });
    try {
      const { status, body } = await buy({ user_id: buyer, credit_card_id: card });
      expect(status).toBe(200);
      const coupon = body.purchase.coupons[0];
      expect(happened.slice(0, 3)).toEqual([`image ${coupon.redemption_code}`, 'charge asked', 'charge answered']);
      expect(coupon.qr_code).toBe((await png(coupon.redemption_code)).toString('base64'));
    } finally {
      asked.mockRestore();
      charged.mockRestore();
    }
  });

  describe('a charge the processor does not answer (it throws): the card may have been charged', () => {
    /** Makes the next charge throw, after (`reached`) or before the processor records it. */
    const dropNextAnswer = (reached: boolean) => {
      const gateway = api.get(PaymentGateway);
      const charge = gateway.charge.bind(gateway);
      const spy = jest.spyOn(gateway, 'charge').mockImplementationOnce(async (request) => {
        if (reached) await charge(request);
        throw new Error('socket hang up');
      });
      return () => spy.mockRestore();
    };
    /** Runs the purchase's armed settling job now, through the scheduler (its timer is two minutes of real time away). */
    const settleNow = async (purchaseId: string, armed: jest.SpyInstance) => {
      const job = armed.mock.calls.map(([j]) => j).find((j) => j.kind === 'recover-purchase' && j.data.purchaseId === purchaseId);
      expect(job).toMatchObject({ id: `recover-purchase-${purchaseId}`, runAt: new Date(clock.now().getTime() + 2 * 60_000) });
      await api.get(Scheduler).schedule({ ...job, runAt: clock.now() });
    };
    const purchaseOf = async (id: string) => (await api.call('GET', `/purchases/${id}`, { apiKey })).body.purchase;
    /**
     * The purchase once settled: released, or fulfilled with every coupon (the job records the sale,
     * then issues the coupons in a write of their own; a read between the two sees none yet).
     */
    const settled = (id: string) =>
      eventually(
        () => purchaseOf(id),
        (purchase) =>
          purchase.fulfillment_state === 'released' ||
          (purchase.fulfillment_state === 'fulfilled' && purchase.coupons.length === purchase.number_bought),
      );

    it("answers 502 naming the purchase, keeps the charge lock, and sells the units with their coupons once the processor's record shows the charge", async () => {
      const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'lost-answer@example.com' } })).body.user_id;
      const card = await storeCard(buyer, TEST_CARDS.visa);
      const before = await numLeft();
      const armed = jest.spyOn(api.get(Scheduler), 'schedule');
      const restore = dropNextAnswer(true);
      try {
        const reply = await buy({ user_id: buyer, credit_card_id: card });
        expect(reply.status).toBe(502);
        expect(reply.body).toEqual({
          status: 'error',
          error_type: 'payment_failed',
          purchase_id: expect.any(String),
          error_msg:
            'the payment processor did not answer; the purchase is settled from its record within 2 minutes: fulfilled if the card was charged, released if not',
        });
        const id = reply.body.purchase_id;
        expect(await purchaseOf(id)).toMatchObject({
          payment_state: 'pending',
          fulfillment_state: 'reserved',
          user_id: buyer,
          credit_card_id: card,
          coupons: [],
        });
        expect(await numLeft()).toBe(before - 1);
        // A retry meanwhile could charge the card a second time: refused until the first is settled.
        expect((await buy({ user_id: buyer, credit_card_id: card })).body).toMatchObject({ error_type: 'already_charging' });

        await settleNow(id, armed);
        const purchase = await settled(id);
        expect(purchase).toMatchObject({ payment_state: 'charged', fulfillment_state: 'fulfilled', amount: 4900 });
        expect(purchase.coupons).toHaveLength(1);
        expect(await numLeft()).toBe(before - 1);
        // Settled, the lock ends at once (the job's last write, just after the coupons), not when it lapses.
        const lockEvents = async () => (await api.get(EventStore).readStream(`usercharge-${buyer}`)).map((e) => e.type);
        expect(await eventually(lockEvents, (types) => types.length >= 2)).toEqual(['ChargeBegun', 'ChargeEnded']);
      } finally {
        restore();
        armed.mockRestore();
      }
    }, 90_000);

    it('releases the units when the processor has no record of the charge, and tries again later while it cannot be asked', async () => {
      const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'never-reached@example.com' } })).body.user_id;
      const card = await storeCard(buyer, TEST_CARDS.visa);
      const before = await numLeft();
      const gateway = api.get(PaymentGateway);
      const armed = jest.spyOn(api.get(Scheduler), 'schedule');
      const restore = dropNextAnswer(false);
      const unreachable = jest.spyOn(gateway, 'chargeOutcome').mockRejectedValueOnce(new Error('connect ECONNREFUSED'));
      try {
        const reply = await buy({ user_id: buyer, credit_card_id: card });
        expect(reply.status).toBe(502);
        const id = reply.body.purchase_id;
        expect(await numLeft()).toBe(before - 1);

        await settleNow(id, armed);
        // The processor could not be asked: a new job a minute later, the purchase still open.
        const retry = await eventually(
          async () => armed.mock.calls.map(([j]) => j).find((j) => j.id === `recover-purchase-${id}-1`),
          (job) => job !== undefined,
        );
        expect(retry).toMatchObject({
          kind: 'recover-purchase',
          runAt: new Date(clock.now().getTime() + 60_000),
          data: { purchaseId: id, attempt: 1 },
        });
        expect((await purchaseOf(id)).fulfillment_state).toBe('reserved');

        await api.get(Scheduler).schedule({ ...retry!, runAt: clock.now() });
        expect(await settled(id)).toMatchObject({ payment_state: 'failed', fulfillment_state: 'released', coupons: [] });
        expect(await numLeft()).toBe(before);
      } finally {
        restore();
        unreachable.mockRestore();
        armed.mockRestore();
      }
    }, 90_000);
  });
});
