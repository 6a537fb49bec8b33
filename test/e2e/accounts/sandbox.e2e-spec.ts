import { ManualClock } from '@deals/kernel';
import { CreatedPartner } from '@deals/accounts';
import { runCli, TestApi } from '../../support/api-harness';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { buyerWithCard, TEST_CARDS } from '../../support/test-cards';

/** A partner's sandbox beside its live account, over HTTPS: nothing of one shows in the other. */
describe('test mode: a sandbox beside the live account', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let partner: CreatedPartner;
  let live: string;
  let test: string;

  beforeAll(async () => {
    api = await TestApi.start({ clock });
    partner = await api.createPartner('Side by side');
    live = partner.apiKey;
    test = partner.sandbox!.apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, current_price: 1000, quantity: 3, max_per_user: undefined }, cardLinked]);
  });
  afterAll(() => api.close());

  const buyer = (apiKey: string, email: string, number: string = TEST_CARDS.visa) =>
    buyerWithCard({ call: (method, path, body) => api.call(method, path, { apiKey, body }) }, apiKey, email, number);
  const buy = (apiKey: string, who: { userId: string; cardId: string }, quantity: number) =>
    api.call('POST', '/purchases', {
      apiKey,
      body: { deal_id: spaDay.id, user_id: who.userId, credit_card_id: who.cardId, quantity, expected_price_per_unit: 1000 },
    });

  it('gives every partner test credentials of their own kind, and says the mode on every answer', async () => {
    expect(test.startsWith('dk_test_')).toBe(true);
    expect(live.startsWith('dk_test_')).toBe(false);
    expect(partner.sandbox!.partnerId).toBe(`${partner.partnerId}_test`);
    expect(partner.sandbox!.username).toMatch(/-test-/);
    const deals = await api.call('GET', `/deals/${spaDay.id}`, { apiKey: test });
    expect(deals.status).toBe(200);
    expect(deals.headers['deals-livemode']).toBe('false');
    expect((await api.call('GET', `/deals/${spaDay.id}`, { apiKey: live })).headers['deals-livemode']).toBe('true');
    // v3 takes the sandbox's username and password the same way.
    const v3 = await api.call('GET', '/api/v3/deals?per_page=5', {
      basic: { username: partner.sandbox!.username, password: partner.sandbox!.password },
    });
    expect([v3.status, v3.headers['deals-livemode']]).toEqual([200, 'false']);
  });

  it("keeps users, cards and purchases apart: neither side finds the other's", async () => {
    const mine = await buyer(test, 'both@example.com');
    const theirs = await buyer(live, 'both@example.com');
    expect(mine.userId).not.toBe(theirs.userId);
    expect((await api.call('GET', `/users/${mine.userId}`, { apiKey: live })).status).toBe(404);
    expect((await api.call('GET', `/users/${theirs.userId}`, { apiKey: test })).status).toBe(404);
    const purchase = await buy(test, mine, 1);
    expect(purchase.status).toBe(200);
    expect((await api.call('GET', `/purchases/${purchase.body.purchase.id}`, { apiKey: live })).status).toBe(404);
    expect((await api.call('GET', `/purchases/${purchase.body.purchase.id}`, { apiKey: test })).status).toBe(200);
  });

  it("never takes a live deal's units: the sandbox keeps inventory of its own", async () => {
    const tester = await buyer(test, 'tester@example.com');
    const customer = await buyer(live, 'customer@example.com');
    await api.settle();
    const before = (await api.call('GET', `/deals/${spaDay.id}`, { apiKey: live })).body.deal;
    // The sandbox sells its own three units (one went in the test above) and is then sold out.
    expect((await buy(test, tester, 2)).status).toBe(200);
    const soldOut = await buy(test, tester, 1);
    expect([soldOut.status, soldOut.body.error_type]).toEqual([422, 'cannot_fufill']);
    await api.settle();
    const after = (await api.call('GET', `/deals/${spaDay.id}`, { apiKey: live })).body.deal;
    expect([after.num_left, after.number_sold]).toEqual([before.num_left, before.number_sold]);
    // Live still has all three.
    expect((await buy(live, customer, 3)).status).toBe(200);
  });

  it('takes only the published test cards in the sandbox', async () => {
    const user = (await api.call('POST', '/users', { apiKey: test, body: { email: 'card@example.com' } })).body.user_id;
    const card = (number: string) =>
      api.call('POST', '/credit_cards', {
        apiKey: test,
        body: { user_id: user, number, verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      });
    const real = await card('6011000990139424');
    expect([real.status, real.body.error_type]).toEqual([422, 'validation_failed']);
    expect(JSON.stringify(real.body)).toContain('is not a test card');
    expect((await card(TEST_CARDS.mastercard)).status).toBe(200);
  });

  it('refuses the test cards on live calls where the installation takes real money (TEST_CARDS_IN_LIVE=refuse)', async () => {
    const strict = await TestApi.start({ env: { TEST_CARDS_IN_LIVE: 'refuse' } });
    try {
      const made = await strict.createPartner('Real money');
      const store = async (apiKey: string) => {
        const user = (await strict.call('POST', '/users', { apiKey, body: { email: 'strict@example.com' } })).body.user_id;
        return strict.call('POST', '/credit_cards', {
          apiKey,
          body: { user_id: user, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
        });
      };
      const live = await store(made.apiKey);
      expect([live.status, live.body.error_msg]).toEqual([
        422,
        'number is a test card: use test credentials (your sandbox) to buy with it',
      ]);
      expect((await store(made.sandbox!.apiKey)).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('keeps the event feed and the statements apart, each saying its mode', async () => {
    await api.settle();
    const testFeed = (await api.call('GET', '/v1/events?per_page=1000', { apiKey: test })).body.events;
    const liveFeed = (await api.call('GET', '/v1/events?per_page=1000', { apiKey: live })).body.events;
    expect(testFeed.length).toBeGreaterThan(0);
    expect(testFeed.every((e: { livemode: boolean }) => e.livemode === false)).toBe(true);
    expect(liveFeed.every((e: { livemode: boolean }) => e.livemode === true)).toBe(true);
    const liveIds = new Set(liveFeed.map((e: { resource_id: string }) => e.resource_id));
    expect(testFeed.some((e: { resource_id: string }) => liveIds.has(e.resource_id))).toBe(false);
    const day = '2026-06-15';
    const testDay = (await api.call('GET', `/v1/settlements/${day}`, { apiKey: test })).body.settlement;
    const liveDay = (await api.call('GET', `/v1/settlements/${day}`, { apiKey: live })).body.settlement;
    // Sandbox: three units of 10.00; live: three more.
    expect([testDay.livemode, testDay.gross_sales_cents]).toEqual([false, 3000]);
    expect([liveDay.livemode, liveDay.gross_sales_cents]).toEqual([true, 3000]);
  });

  it("simulates a card network's transactions on a sandbox's card link: cleared, then refunded, with their events", async () => {
    const user = (await api.call('POST', '/users', { apiKey: test, body: { email: 'linked@example.com' } })).body.user_id;
    const link = (await api.call('POST', '/card_links', { apiKey: test, body: { user_id: user, deal_id: cardLinked.id } })).body.card_link;
    const simulate = (body: Record<string, unknown>, apiKey = test) =>
      api.call('POST', '/v1/test_helpers/card_transactions', { apiKey, body: { card_link_id: link.id, ...body } });
    const cleared = await simulate({ phase: 'cleared', transaction_amount: 2400, merchant: 'Bean There, 1 Lake St' });
    expect(cleared.status).toBe(200);
    const transaction = cleared.body.card_transaction;
    expect(transaction).toMatchObject({ phase: 'cleared', cleared_amount: 2400, incentive_cents: 500, merchant: 'Bean There, 1 Lake St' });
    expect(transaction.id).toMatch(/^test_/);
    expect((await api.call('GET', `/users/${user}/card_links`, { apiKey: test })).body.card_links[0].state).toBe('fulfilled');
    const refunded = await simulate({ phase: 'refunded', transaction_amount: 2400, transaction_reference: transaction.id });
    expect(refunded.body.card_transaction).toMatchObject({
      phase: 'refunded',
      incentive_reversed_cents: 500,
      merchant: 'Bean There, 1 Lake St',
    });
    expect((await api.call('GET', `/users/${user}/card_links`, { apiKey: test })).body.card_links[0].state).toBe('linked');
    await api.settle();
    const feed = (await api.call('GET', `/v1/events?resource_id=${link.id}`, { apiKey: test })).body.events;
    expect(feed.map((e: { type: string; livemode: boolean }) => [e.type, e.livemode])).toEqual(
      expect.arrayContaining([
        ['card_link.transaction_cleared', false],
        ['card_link.transaction_refunded', false],
      ]),
    );
    // Live credentials cannot simulate, and a live link is not found by a sandbox's helper.
    const refused = await simulate({ phase: 'cleared', transaction_amount: 2400 }, live);
    expect([refused.status, refused.body.error_type]).toEqual([403, 'forbidden']);
    const liveUser = (await api.call('POST', '/users', { apiKey: live, body: { email: 'linked@example.com' } })).body.user_id;
    const liveLink = (await api.call('POST', '/card_links', { apiKey: live, body: { user_id: liveUser, deal_id: cardLinked.id } })).body
      .card_link;
    const crossed = await api.call('POST', '/v1/test_helpers/card_transactions', {
      apiKey: test,
      body: { card_link_id: liveLink.id, phase: 'cleared', transaction_amount: 2400 },
    });
    expect(crossed.status).toBe(404);
  });

  it('opens a sandbox for a partner registered without one, once', async () => {
    const older = await api.createPartner('Auditors have none', 'auditor');
    expect(older.sandbox).toBeNull();
    const refused = await runCli(api.dataDir, ['partners:sandbox', older.partnerId]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('an auditor has no sandbox');
    const again = await runCli(api.dataDir, ['partners:sandbox', partner.partnerId]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('is open already');
  });
});
