import { ManualClock } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';

describe("regional lists for a user: GET /regions/:place/deals?user_id= (the user's preferences)", () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let otherKey: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock, env: { SLOW_CARD_MS: '0' } });
    apiKey = (await api.createPartner()).apiKey;
    otherKey = (await api.createPartner('Other')).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([
      { ...spaDay, id: 'spa-a', start_at: '2026-06-10T00:00:00Z', max_per_user: 2 },
      { ...spaDay, id: 'spa-b', start_at: '2026-06-11T00:00:00Z', max_per_user: 3 },
      { ...spaDay, id: 'spa-c', start_at: '2026-06-12T00:00:00Z', max_per_user: undefined },
      { ...cardLinked, id: 'coffee-a', start_at: '2026-06-13T00:00:00Z' },
      { ...cardLinked, id: 'coffee-b', start_at: '2026-06-14T00:00:00Z' },
    ]);
  });
  afterAll(() => api.close());

  const list = (query: string, key = apiKey) => api.call('GET', `/regions/chicago/deals?filter=in_flight${query}`, { apiKey: key });
  const ids = (reply: { body: { deals: Array<{ id: string }> } }) => reply.body.deals.map((d) => d.id);
  const buyer = async () => {
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: `b${Math.random().toString(36).slice(2)}@example.com` } }))
      .body.user_id;
    const cardId = (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: userId, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    const buy = async (dealId: string, quantity: number) =>
      expect(
        (
          await api.call('POST', '/purchases', {
            apiKey,
            body: { deal_id: dealId, quantity, user_id: userId, credit_card_id: cardId, expected_price_per_unit: spaDay.current_price },
          })
        ).status,
      ).toBe(200);
    return { userId, buy };
  };

  it('without user_id lists every deal on sale, by start', async () => {
    expect(ids(await list(''))).toEqual(['spa-a', 'spa-b', 'spa-c', 'coffee-a', 'coffee-b']);
  });

  it('leaves out what the user can no longer buy, and counts its purchases in purchasable_number', async () => {
    const { userId, buy } = await buyer();
    await buy('spa-a', 2);
    await buy('spa-b', 1);
    const link = (await api.call('POST', '/card_links', { apiKey, body: { user_id: userId, deal_id: 'coffee-a' } })).body.card_link;
    await api.call('PUT', `/card_links/${link.id}/redeem`, {
      apiKey,
      body: { transaction_reference: 't', transaction_amount: 2500, transaction_date: '2026-06-15T12:00:00Z', max_redemption: true },
    });
    const mine = await list(`&user_id=${userId}`);
    expect(ids(mine)).toEqual(['spa-b', 'spa-c', 'coffee-b']);
    expect(mine.body.deals.find((d: { id: string }) => d.id === 'spa-b').purchasable_number).toBe(2);
    expect((await list(`&user_id=${userId}&count=true`)).body).toEqual({ status: 'success', count: 3 });
    // The list of everyone is as it was.
    expect((await list('')).body.deals.find((d: { id: string }) => d.id === 'spa-b').purchasable_number).toBe(3);
  });

  it('puts the user’s saved deals first (each part by start), paged over the whole', async () => {
    const { userId } = await buyer();
    for (const deal_id of ['coffee-b', 'spa-b']) await api.call('POST', '/saved_deals', { apiKey, body: { user_id: userId, deal_id } });
    expect(ids(await list(`&user_id=${userId}`))).toEqual(['spa-b', 'coffee-b', 'spa-a', 'spa-c', 'coffee-a']);
    expect(ids(await list(`&user_id=${userId}&per_page=2&page=1`))).toEqual(['spa-b', 'coffee-b']);
    expect(ids(await list(`&user_id=${userId}&per_page=2&page=2`))).toEqual(['spa-a', 'spa-c']);
    expect(ids(await list(`&user_id=${userId}&per_page=3&page=1`))).toEqual(['spa-b', 'coffee-b', 'spa-a']);
    expect(ids(await list(`&user_id=${userId}&per_page=3&page=2`))).toEqual(['spa-c', 'coffee-a']);
    expect((await list(`&user_id=${userId}&count=true`)).body.count).toBe(5);
  });

  it("is 404 for an unknown user, another partner's user and a deleted one", async () => {
    const { userId } = await buyer();
    expect((await list(`&user_id=nobody`)).status).toBe(404);
    expect((await list(`&user_id=${userId}`, otherKey)).body).toMatchObject({ status: 'error', error_type: 'find_failed' });
    await api.call('PUT', `/users/${userId}`, { apiKey, body: { is_deleted: true } });
    expect((await list(`&user_id=${userId}`)).status).toBe(404);
  });
});
