import { CatalogQueries } from '@deals/catalog';
import { EventStore, ManualClock } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { chicago, ongoingShipped, spaDay } from '../../support/catalogue-fixtures';
import { holdNextCharge } from '../../support/held-charge';
import { TEST_CARDS } from '../../support/test-cards';

describe('POST /v1/purchases/full.json', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([
      { ...spaDay, quantity: 20, max_per_user: 10 },
      { ...ongoingShipped, quantity: 5 },
      { ...spaDay, id: 'chicago-spa-paused', state: 'paused', quantity: 5 },
      { ...spaDay, id: 'chicago-spa-gone', quantity: 0 },
      { ...spaDay, id: 'chicago-spa-one-each', quantity: 5, max_per_user: 1 },
      { ...spaDay, id: 'chicago-spa-few', quantity: 3, max_per_user: undefined },
    ]);
  });
  afterAll(() => api.close());

  const full = (body: Record<string, unknown>) => api.call('POST', '/v1/purchases/full.json', { apiKey, body });
  const card = { number: '4242424242424242', verification_value: '123', month: '12', year: '2030', zip_code: '60601' };
  const newUser = { email: 'full@example.com', password: 'secret1', password_confirmation: 'secret1', first_name: 'Fay' };
  const address = { name: 'Fay Lee', address_one: '1 Lake St', postal_code: '60601', city: 'Chicago', state: 'il', country: 'us' };

  it('creates the user, stores the card and buys, in one call', async () => {
    const reply = await full({ deal_id: 'chicago-spa-day', quantity: 2, user: newUser, credit_card: card });
    expect(reply.status).toBe(200);
    expect(reply.body.purchase).toMatchObject({ payment_state: 'charged', fulfillment_state: 'fulfilled', number_bought: 2, amount: 9800 });
    expect(reply.body.purchase.coupons).toHaveLength(2);
    const { user_id: userId, credit_card_id: cardId } = reply.body.purchase;
    expect((await api.call('GET', `/users/${userId}`, { apiKey })).body.user.firstname).toBe('Fay');
    expect(
      (await api.call('GET', `/credit_cards?user_id=${userId}`, { apiKey })).body.credit_cards.map((c: { id: string }) => c.id),
    ).toEqual([cardId]);

    const again = await full({
      deal_id: 'chicago-spa-day',
      quantity: 1,
      user: { ...newUser, email: 'FULL@example.com' },
      credit_card: card,
    });
    expect(again.body.purchase).toMatchObject({ user_id: userId, credit_card_id: cardId });
    const byIds = await full({ deal_id: 'chicago-spa-day', quantity: 1, user_id: userId, credit_card_id: cardId });
    expect(byIds.body.purchase.user_id).toBe(userId);
  });

  it('needs a shipping address for a shipped deal, by object or by the id of one given before', async () => {
    const missing = await full({ deal_id: 'chicago-headphones', quantity: 1, user: { email: 'ship@example.com' }, credit_card: card });
    expect(missing.body.errors).toEqual([
      { type: 'missing_field', resource: 'shipping_address', field: 'shipping_address', message: 'is required for a shipped deal' },
    ]);
    const ok = await full({
      deal_id: 'chicago-headphones',
      quantity: 1,
      user: { email: 'ship@example.com' },
      credit_card: card,
      shipping_address: address,
    });
    expect(ok.status).toBe(200);
    const bad = await full({
      deal_id: 'chicago-headphones',
      quantity: 1,
      user: { email: 'ship@example.com' },
      credit_card: card,
      shipping_address: { ...address, state: 'Illinois', city: '' },
    });
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['city', 'state']);
  });

  it('leaves nothing behind when a section fails, naming each problem', async () => {
    const reply = await full({
      deal_id: 'chicago-spa-day',
      quantity: 1,
      user: { email: 'half@example.com', password: 'abc' },
      credit_card: { ...card, number: '4242424242424241' },
    });
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toEqual([
      // Named as sent (`password`, the user object's documented name), not by its other name.
      { type: 'invalid', resource: 'user', field: 'password', message: 'must be at least 5 characters' },
      { type: 'invalid', resource: 'credit_card', field: 'number', message: 'fails the Luhn check' },
    ]);
    // No user was made: the email is still free.
    expect((await api.call('POST', '/users', { apiKey, body: { email: 'half@example.com' } })).status).toBe(200);
  });

  it('names a field sent with the wrong type as invalid, not missing', async () => {
    const reply = await full({ deal_id: 5, quantity: 1, user_id: 7, credit_card_id: { id: 'c' } });
    expect([reply.status, reply.body.errors]).toEqual([
      422,
      [
        { type: 'invalid', resource: 'purchase', field: 'deal_id', message: 'must be a string' },
        { type: 'invalid', resource: 'user', field: 'user_id', message: 'must be a string' },
        { type: 'invalid', resource: 'credit_card', field: 'credit_card_id', message: 'must be a string' },
      ],
    ]);
    const objects = await full({ deal_id: 'chicago-spa-day', quantity: 1, user: 'someone', credit_card: ['c'] });
    expect(objects.body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'user', message: 'give user_id or a user object' },
      { type: 'invalid', resource: 'credit_card', field: 'credit_card', message: 'give credit_card_id or a credit_card object' },
    ]);
  });

  it('refuses a user object whose two password names disagree, making nothing', async () => {
    const reply = await full({
      deal_id: 'chicago-spa-day',
      quantity: 1,
      user: { email: 'two-pass@example.com', pass: 'secret1', password: 'secret2', password_confirmation: 'secret2' },
      credit_card: card,
    });
    expect([reply.status, reply.body.errors]).toEqual([
      422,
      [{ type: 'invalid', resource: 'user', field: 'password', message: 'differs from pass: give one of the two' }],
    ]);
    expect((await api.call('POST', '/users', { apiKey, body: { email: 'two-pass@example.com' } })).status).toBe(200);
  });

  it('makes no user or card for a purchase the deal refuses (not on sale, over the per-user limit)', async () => {
    const paused = await full({ deal_id: 'chicago-spa-paused', quantity: 1, user: { email: 'paused@example.com' }, credit_card: card });
    expect([paused.status, paused.body]).toEqual([
      422,
      { status: 'error', error_type: 'cannot_fufill', error_msg: 'the deal is not on sale' },
    ]);
    const over = await full({ deal_id: 'chicago-spa-day', quantity: 11, user: { email: 'over@example.com' }, credit_card: card });
    expect([over.status, over.body]).toEqual([422, { status: 'error', error_type: 'cannot_fufill', error_msg: 'at most 10 per user' }]);
    for (const email of ['paused@example.com', 'over@example.com'])
      expect((await api.call('POST', '/users', { apiKey, body: { email } })).status).toBe(200);
  });

  it('makes no user or card for a deal sold out, or short of units, or for a known user past the limit with earlier purchases', async () => {
    const gone = await full({ deal_id: 'chicago-spa-gone', quantity: 1, user: { email: 'gone@example.com' }, credit_card: card });
    expect([gone.status, gone.body]).toEqual([422, { status: 'error', error_type: 'cannot_fufill', error_msg: 'the deal is sold out' }]);
    const short = await full({ deal_id: 'chicago-spa-one-each', quantity: 1, user: { email: 'short@example.com' }, credit_card: card });
    expect(short.status).toBe(200);
    const mastercard = { ...card, number: `${'5555'.repeat(3)}4444` };
    // The same user again, by id and by email, each with a new card: refused, and the card not stored.
    const byId = await full({
      deal_id: 'chicago-spa-one-each',
      quantity: 1,
      user_id: short.body.purchase.user_id,
      credit_card: mastercard,
    });
    const byEmail = await full({
      deal_id: 'chicago-spa-one-each',
      quantity: 1,
      user: { email: 'SHORT@example.com' },
      credit_card: mastercard,
    });
    for (const refused of [byId, byEmail])
      expect([refused.status, refused.body]).toEqual([
        422,
        { status: 'error', error_type: 'cannot_fufill', error_msg: 'at most 1 per user; already bought 1' },
      ]);
    expect((await api.call('GET', `/credit_cards?user_id=${short.body.purchase.user_id}`, { apiKey })).body.credit_cards).toHaveLength(1);
    const tooMany = await full({ deal_id: 'chicago-spa-few', quantity: 4, user: { email: 'too-many@example.com' }, credit_card: card });
    expect([tooMany.status, tooMany.body]).toEqual([422, { status: 'error', error_type: 'cannot_fufill', error_msg: 'only 3 units left' }]);
    for (const email of ['gone@example.com', 'too-many@example.com'])
      expect((await api.call('POST', '/users', { apiKey, body: { email } })).status).toBe(200);
  });

  it('charges the price at the hold when it changes during the call: no error naming expected_price_per_unit, a field this call has not', async () => {
    const catalog = api.get(CatalogQueries);
    const real = catalog.deal.bind(catalog);
    let reads = 0;
    // The full purchase's own read sees 4900; the purchase's read, a moment later, a new price.
    catalog.deal = async (id: string) => {
      const view = await real(id);
      return view && id === 'chicago-spa-day' && reads++ > 0 ? { ...view, deal: { ...view.deal!, current_price: 5100 } } : view;
    };
    try {
      const reply = await full({ deal_id: 'chicago-spa-day', quantity: 1, user: { email: 'repriced@example.com' }, credit_card: card });
      expect([reply.status, reply.body.purchase?.amount, reply.body.purchase?.price]).toEqual([200, 5100, 5100]);
    } finally {
      catalog.deal = real;
    }
  });

  it('reuses the user that another full purchase with the same new email is making at the same moment', async () => {
    const replies = await Promise.all(
      Array.from({ length: 3 }, () =>
        full({ deal_id: 'chicago-spa-day', quantity: 1, user: { email: 'together@example.com' }, credit_card: card }),
      ),
    );
    // One user for all three; its charges are one at a time, so a purchase may meet another's (409 already_charging).
    expect(replies.map((r) => r.status).filter((s) => s !== 200 && s !== 409)).toEqual([]);
    const users = new Set(replies.map((r) => r.body.purchase?.user_id ?? r.body.user_id));
    expect(users.size).toBe(1);
    expect([...users][0]).toEqual(expect.any(String));
  });

  it('answers 409 already_charging while an earlier purchase of the same user is being charged', async () => {
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'charging@example.com' } })).body.user_id;
    // Its charge held (made, its answer kept back) until the second call has its answer.
    const held = holdNextCharge(api);
    const inFlight = full({
      deal_id: 'chicago-spa-day',
      quantity: 1,
      user_id: userId,
      credit_card: { ...card, number: TEST_CARDS.mastercard },
    });
    await held.charging;
    const charging = async () => (await api.get(EventStore).readStream(`usercharge-${userId}`)).at(-1)?.type === 'ChargeBegun';
    expect(await charging()).toBe(true);

    const second = await full({ deal_id: 'chicago-spa-day', quantity: 1, user_id: userId, credit_card: card }).finally(held.release);
    expect(second.status).toBe(409);
    expect(second.body).toEqual({
      status: 'error',
      error_type: 'already_charging',
      error_msg: 'an earlier purchase of this user is still being charged',
      user_id: userId,
      credit_card_id: expect.any(String),
    });
    const first = await inFlight;
    expect(first.status).toBe(200);
    expect(first.body.purchase).toMatchObject({
      payment_state: 'charged',
      fulfillment_state: 'fulfilled',
      user_id: userId,
      number_bought: 1,
    });
    expect(await charging()).toBe(false);
    // The 409 names the card the second call stored before it met the charge in flight.
    const cardIds = (await api.call('GET', `/credit_cards?user_id=${userId}`, { apiKey })).body.credit_cards.map(
      (c: { id: string }) => c.id,
    );
    expect(cardIds.sort()).toEqual([first.body.purchase.credit_card_id, second.body.credit_card_id].sort());
  });

  it('answers declined for a declined card, naming the user and card it made', async () => {
    const reply = await full({
      deal_id: 'chicago-spa-day',
      quantity: 1,
      user: { email: 'declined@example.com' },
      credit_card: { ...card, number: '4000000000000002' },
    });
    expect(reply.status).toBe(422);
    expect(reply.body).toMatchObject({
      status: 'error',
      error_type: 'declined',
      user_id: expect.any(String),
      credit_card_id: expect.any(String),
    });
  });
});
