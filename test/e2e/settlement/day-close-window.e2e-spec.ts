import { EventStore, ManualClock } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { TEST_CARDS } from '../../support/test-cards';
import { eventually } from '../../support/eventually';
import { holdNextAppendOf, holdNextReadOf } from '../../support/held-write';

/**
 * A write under a test clock that records a statement's line dated in the clock's time (a charge's
 * start, a claim) is written with the clock's record of it: an advance that passes the line's day
 * while the call runs, before its unit is written, makes the unit refused (the clock moved: the
 * call is made again), so a day a statement served closed never gains a line.
 */
describe('a day closed under a test clock gains no line from a call begun before the advance', () => {
  const real = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let test: string;

  beforeAll(async () => {
    api = await TestApi.start({ clock: real });
    test = (await api.createPartner('Slow writer')).sandbox!.apiKey;
    await api.importRegions([chicago]);
    const deal = { ...spaDay, current_price: 1000, quantity: 100, max_per_user: undefined, end_at: '2027-06-18T05:00:00Z' };
    await api.importDeals([deal, { ...deal, id: 'chicago-spa-night' }]);
  });
  afterAll(() => api.close());

  /** A new clock at 10:00 on 1 September, and calls made under it. */
  async function newClock() {
    const clock = (await api.call('POST', '/v1/test_clocks', { apiKey: test, body: { frozen_time: '2026-09-01T10:00:00Z' } })).body
      .test_clock;
    const under = (method: string, path: string, body?: unknown) =>
      api.call(method, path, { apiKey: test, body, headers: { 'deals-test-clock': clock.id } });
    const user = async (email: string) => {
      const userId = (await under('POST', '/users', { email })).body.user_id as string;
      const card = await under('POST', '/credit_cards', {
        user_id: userId,
        number: TEST_CARDS.visa,
        verification_value: '123',
        month: 12,
        year: 2030,
        zip_code: '60601',
      });
      return { user: userId, card: card.body.credit_card_id as string };
    };
    const buy = (buyer: { user: string; card: string }, dealId = spaDay.id) =>
      under('POST', '/purchases', {
        deal_id: dealId,
        user_id: buyer.user,
        credit_card_id: buyer.card,
        quantity: 1,
        expected_price_per_unit: 1000,
      });
    /** Advances the clock past the close of 1 September, and answers that day's statement once it is ready. */
    const advancePastTheClose = async () => {
      const to = { frozen_time: '2026-09-03T00:00:00Z' };
      expect((await api.call('POST', `/v1/test_clocks/${clock.id}/advance`, { apiKey: test, body: to })).status).toBe(200);
      await eventually(
        () => api.call('GET', `/v1/test_clocks/${clock.id}`, { apiKey: test }),
        (reply) => reply.body.test_clock.status === 'ready',
      );
      await api.settle();
      return (await under('GET', '/v1/settlements/2026-09-01')).body.settlement;
    };
    return { clockId: clock.id as string, under, user, buy, advancePastTheClose };
  }

  const refusedAsMoved = {
    status: 'error',
    error_type: 'validation_failed',
    error_msg: 'the test clock moved while this call ran: make the call again',
  };

  it('refuses a purchase whose charge had not begun when the clock passed its day’s close, writing nothing of it', async () => {
    const { under, user, buy, advancePastTheClose } = await newClock();
    expect((await buy(await user('quick@example.com'))).status).toBe(200);
    const slow = await user('slow@example.com');
    // Its start decided (the charge lock, the reservation, the hold) and held before it is written.
    const held = holdNextAppendOf(api, 'ChargeBegun');
    const slowPurchase = buy(slow);
    await held.appending;
    let during;
    try {
      during = await advancePastTheClose();
    } finally {
      held.release();
    }
    expect(during).toMatchObject({ state: 'closed', line_item_count: 1, gross_sales_cents: 1000, digest: expect.any(String) });
    const refused = await slowPurchase;
    expect([refused.status, refused.body]).toEqual([422, expect.objectContaining(refusedAsMoved)]);
    expect(await api.get(EventStore).readStream(`usercharge-${slow.user}`)).toEqual([]);
    await api.settle();
    expect((await under('GET', '/v1/settlements/2026-09-01')).body.settlement).toEqual(during);

    // Made again, it is bought in the clock's time now, on the day the clock stands at.
    expect((await buy(slow)).status).toBe(200);
    await api.settle();
    expect((await under('GET', '/v1/settlements/2026-09-01')).body.settlement).toEqual(during);
    expect((await under('GET', '/v1/settlements/2026-09-03')).body.settlement).toMatchObject({
      line_item_count: 1,
      gross_sales_cents: 1000,
    });
  });

  it('takes two purchases under one clock at once: the one written second decides again on the clock’s stream', async () => {
    const { clockId, under, user, buy } = await newClock();
    const [first, second] = [await user('first@example.com'), await user('second@example.com')];
    // The first's start decided on the clock's stream as it was, and held before it is written.
    const held = holdNextAppendOf(api, 'ChargeBegun');
    const firstPurchase = buy(first);
    await held.appending;
    let secondPurchase;
    try {
      // Another deal's (another inventory's turn): written first, with its record on the clock's stream.
      secondPurchase = await buy(second, 'chicago-spa-night');
    } finally {
      held.release();
    }
    expect(secondPurchase.status).toBe(200);
    expect((await firstPurchase).status).toBe(200);
    // One record a purchase: the held one's append, expecting the clock's stream as it was, was refused and decided again.
    const records = (await api.get(EventStore).readStream(`testclock-${clockId}`)).filter((e) => e.type === 'TestClockWriteRecorded');
    expect(records.map((e) => e.data)).toEqual([
      { clockId, at: '2026-09-01T10:00:00.000Z' },
      { clockId, at: '2026-09-01T10:00:00.000Z' },
    ]);
    await api.settle();
    expect((await under('GET', '/v1/settlements/2026-09-01')).body.settlement).toMatchObject({
      line_item_count: 2,
      gross_sales_cents: 2000,
    });
  });

  it('refuses a reservation’s claim begun before the clock passed its day’s close, then claims it in the clock’s time', async () => {
    const { under, user, advancePastTheClose } = await newClock();
    const buyer = await user('claimer@example.com');
    const reservation = (await under('POST', '/purchases/reserve', { deal_id: spaDay.id, num_bought: 1 })).body.purchase.id as string;
    // The claim accepted, held at its first read of the purchase: it has decided nothing yet.
    const held = holdNextReadOf(api, `purchase-${reservation}`);
    const claim = under('PUT', `/purchases/${reservation}/claim`, { user_id: buyer.user });
    await held.reading;
    let during;
    try {
      during = await advancePastTheClose();
    } finally {
      held.release();
    }
    expect(during).toMatchObject({ state: 'closed', line_item_count: 0, digest: expect.any(String) });
    const refused = await claim;
    expect([refused.status, refused.body]).toEqual([422, expect.objectContaining(refusedAsMoved)]);
    // Refused before its fresh units (its hold lapsed in the advance) were sold: none left sold to no sale.
    const log = await api.get(EventStore).readAll({ after: null, maxCount: 100_000 });
    const sold = log.filter((e) => e.type === 'UnitsSold' && String((e.data as { holdId: string }).holdId).startsWith(reservation));
    expect(sold).toEqual([]);
    await api.settle();
    expect((await under('GET', '/v1/settlements/2026-09-01')).body.settlement).toEqual(during);

    // Made again, the claim sells the units (its reservation's hold lapsed meanwhile) on the day the clock stands at.
    const claimed = await under('PUT', `/purchases/${reservation}/claim`, { user_id: buyer.user });
    expect([claimed.status, claimed.body.purchase?.fulfillment_state]).toEqual([200, 'fulfilled']);
    await api.settle();
    expect((await under('GET', '/v1/settlements/2026-09-01')).body.settlement).toEqual(during);
    expect((await under('GET', '/v1/settlements/2026-09-03')).body.settlement).toMatchObject({
      line_item_count: 1,
      gross_sales_cents: 1000,
    });
  });
});
