import { EventStore, ManualClock } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { TEST_CARDS } from '../../support/test-cards';
import { eventually } from '../../support/eventually';
import { holdNextCharge } from '../../support/held-charge';

/**
 * A day's statement closes only when nothing dated in it can still be written: a purchase under a
 * test clock keeps the clock's time of its start, so one being charged while the clock is advanced
 * past the day's close still books its sale on that day; the day waits for it, and once closed it
 * never changes.
 */
describe('a statement day closes only once nothing dated in it can come', () => {
  const real = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let test: string;

  beforeAll(async () => {
    api = await TestApi.start({ clock: real });
    test = (await api.createPartner('Slow payer')).sandbox!.apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, current_price: 1000, quantity: 100, max_per_user: undefined, end_at: '2027-06-18T05:00:00Z' }]);
  });
  afterAll(() => api.close());

  it('keeps a clock’s day open while a purchase begun that day is charged past its close, then closes it with the sale, for good', async () => {
    const clock = (await api.call('POST', '/v1/test_clocks', { apiKey: test, body: { frozen_time: '2026-09-01T10:00:00Z' } })).body
      .test_clock;
    const under = (method: string, path: string, body?: unknown) =>
      api.call(method, path, { apiKey: test, body, headers: { 'deals-test-clock': clock.id } });
    const card = async (email: string, number: string) => {
      const user = (await under('POST', '/users', { email })).body.user_id as string;
      const stored = await under('POST', '/credit_cards', {
        user_id: user,
        number,
        verification_value: '123',
        month: 12,
        year: 2030,
        zip_code: '60601',
      });
      return { user, card: stored.body.credit_card_id as string };
    };
    const buy = (buyer: { user: string; card: string }) =>
      under('POST', '/purchases', {
        deal_id: spaDay.id,
        user_id: buyer.user,
        credit_card_id: buyer.card,
        quantity: 1,
        expected_price_per_unit: 1000,
      });
    const quick = await card('quick@example.com', TEST_CARDS.visa);
    const first = await buy(quick);
    expect(first.status).toBe(200);
    const slow = await card('slow@example.com', TEST_CARDS.visa);
    // Its charge made, the processor's answer held until the day has been seen open past its close.
    const held = holdNextCharge(api);
    const slowPurchase = buy(slow);
    await held.charging;
    expect((await api.get(EventStore).readStream(`usercharge-${slow.user}`)).map((e) => e.type)).toEqual(['ChargeBegun']);

    expect(
      (await api.call('POST', `/v1/test_clocks/${clock.id}/advance`, { apiKey: test, body: { frozen_time: '2026-09-03T00:00:00Z' } }))
        .status,
    ).toBe(200);
    await eventually(
      () => api.call('GET', `/v1/test_clocks/${clock.id}`, { apiKey: test }),
      (reply) => reply.body.test_clock.status === 'ready',
    );
    await api.settle();
    const during = await under('GET', '/v1/settlements/2026-09-01');
    expect(during.body.settlement).toMatchObject({ state: 'open', line_item_count: 1, digest: null });

    held.release();
    expect((await slowPurchase).status).toBe(200);
    await api.settle();
    const after = await under('GET', '/v1/settlements/2026-09-01');
    expect(after.body.settlement).toMatchObject({
      state: 'closed',
      line_item_count: 2,
      gross_sales_cents: 2000,
      digest: expect.any(String),
    });
    await api.settle();
    expect((await under('GET', '/v1/settlements/2026-09-01')).body.settlement).toEqual(after.body.settlement);
  }, 60_000);
});
