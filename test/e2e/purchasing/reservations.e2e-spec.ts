import { EventStore, handleCommand, ManualClock, OPERATOR, Scheduler } from '@deals/kernel';
import { inventoryDecider } from '@deals/purchasing/domain/inventory/inventory.decider';
import { TestApi } from '../../support/api-harness';
import { eventually } from '../../support/eventually';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { InsecureHttps } from '../../support/insecure-https';

describe("reserve, claim and release, and a user's coupons", () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let basic: { username: string; password: string };
  let userId: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    const partner = await api.createPartner();
    apiKey = partner.apiKey;
    basic = { username: partner.username, password: partner.password };
    await api.importRegions([chicago]);
    // The buyer claims all five spa-day units across the tests below, so the limit allows five.
    await api.importDeals([
      { ...spaDay, quantity: 5, max_per_user: 5 },
      { ...spaDay, id: 'hot-deal', quantity: 50, max_per_user: undefined },
      { ...spaDay, id: 'two-per-user', quantity: 10, max_per_user: 2 },
      { ...spaDay, id: 'one-per-user', quantity: 10, max_per_user: 1 },
      { ...spaDay, id: 'race-deal', quantity: 10, max_per_user: undefined },
      { ...spaDay, id: 'pausing-deal', quantity: 10, max_per_user: undefined },
      { ...spaDay, id: 'dozen-deal', quantity: 12, max_per_user: undefined },
      { ...spaDay, id: 'typed-deal', quantity: 5, max_per_user: undefined },
      { ...spaDay, id: 'lapsing-deal', quantity: 3, max_per_user: undefined },
      { ...spaDay, id: 'expiring-deal', quantity: 10, max_per_user: undefined, expires_at: '2026-06-15T12:02:00Z' },
    ]);
    userId = (await api.call('POST', '/users', { apiKey, body: { email: 'buyer@example.com' } })).body.user_id;
  });
  afterAll(() => api.close());
  afterEach(() => clock.set('2026-06-15T12:00:00Z'));

  const reserve = (num_bought: unknown, deal_id: unknown = 'chicago-spa-day') =>
    api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id, num_bought } });
  const claim = (id: string, user = userId) => api.call('PUT', `/purchases/${id}/claim`, { apiKey, body: { user_id: user } });
  const release = (id: string) => api.call('PUT', `/purchases/${id}/release`, { apiKey });
  const numLeft = async (dealId = 'chicago-spa-day') => (await api.call('GET', `/deals/${dealId}`, { apiKey })).body.deal.num_left;

  it('reserves: pending, reserved, no user or card, no coupons; the units are held', async () => {
    const reply = await reserve(2);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      status: 'success',
      purchase: {
        id: reply.body.purchase.id,
        purchase_id: reply.body.purchase.id,
        deal_type: 'daily-deal',
        deal_id: 'chicago-spa-day',
        price: 4900,
        amount: 9800,
        number_bought: 2,
        payment_state: 'pending',
        fulfillment_state: 'reserved',
        created_at: 'Mon Jun 15 12:00:00 UTC 2026',
        user_id: null,
        credit_card_id: null,
        deal: {
          id: 'chicago-spa-day',
          deal_id: 'chicago-spa-day',
          title: 'Spa day for two',
          type: 'daily-deal',
          image_url: '/images/deals/chicago-spa-day.jpg',
          image_url_abs: 'https://deals.example.com/images/deals/chicago-spa-day.jpg',
        },
        coupons: [],
      },
    });
    expect(await numLeft()).toBe(3);
    expect((await release(reply.body.purchase.id)).body.purchase).toMatchObject({
      payment_state: 'pending',
      fulfillment_state: 'released',
    });
    expect(await numLeft()).toBe(5);
    expect((await release(reply.body.purchase.id)).status).toBe(200);
  });

  it('claims: charged, fulfilled, the user set, one coupon per unit with codes, QR and print page', async () => {
    const id = (await reserve(2)).body.purchase.id;
    const reply = await claim(id);
    expect(reply.body.purchase).toMatchObject({
      payment_state: 'charged',
      fulfillment_state: 'fulfilled',
      user_id: userId,
      credit_card_id: null,
      amount: 9800,
    });
    const coupons = reply.body.purchase.coupons;
    expect(coupons).toHaveLength(2);
    expect(coupons[0]).toEqual({
      id: `${id}-1`,
      slug: `${id}-1`,
      deal_id: 'chicago-spa-day',
      deal_type: 'daily-deal',
      barcode: expect.stringMatching(/^\d{13}$/),
      redemption_code: expect.stringMatching(/^[A-Z2-9]{10}$/),
      expires_at: 'Thu Dec 31 23:59:00 UTC 2026',
      created_at: 'Mon Jun 15 12:00:00 UTC 2026',
      state: 'valid',
      redeemed_at: null,
      qrcode_url: expect.stringMatching(new RegExp(`/coupons/${id}-1/qr\\.png\\?key=[\\w-]{22}$`)),
      qr_code_url: expect.any(String),
      qrcode_base64: expect.stringMatching(/^iVBORw0KGgo/),
      qr_code: expect.any(String),
      print_url: expect.stringMatching(new RegExp(`/coupons/${id}-1/print\\?key=[\\w-]{22}$`)),
    });
    expect(await numLeft()).toBe(3);
    const { request } = await import('undici');
    const dispatcher = new InsecureHttps();
    const opened = (link: string) => request(`${api.url}${new URL(link).pathname}${new URL(link).search}`, { dispatcher });
    const raw = await opened(coupons[0].qr_code_url);
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['content-type']).toBe('image/png');
    expect(raw.headers['cache-control']).toBe('private, max-age=86400');
    const page = await opened(coupons[0].print_url);
    const html = await page.body.text();
    expect(html).toContain(coupons[0].redemption_code);
    // The deal's terms the holder needs at the counter; the page kept by no cache, loading nothing from elsewhere.
    for (const text of ['At Calm Spa', 'Print the coupon.', 'Limit 2 per person.', 'Void where prohibited.']) expect(html).toContain(text);
    expect(page.headers).toMatchObject({
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'content-security-policy': expect.stringContaining("default-src 'none'"),
    });
    // Without its link's key, or with another coupon's, a coupon's image and page are not found:
    // knowing the purchase id is not enough.
    for (const link of [
      `/coupons/${id}-1/print`,
      `/coupons/${id}-1/qr.png`,
      `/coupons/${id}-1/print${new URL(coupons[1].print_url).search}`,
      `/coupons/${id}-1/print?key=`,
    ]) {
      const refused = await request(`${api.url}${link}`, { dispatcher });
      expect([refused.statusCode, refused.headers['cache-control'], await refused.body.json()]).toEqual([
        404,
        'no-store',
        { status: 'error', error_type: 'find_failed', error_msg: 'coupon not found' },
      ]);
    }
    expect((await api.call('GET', `/purchases/${id}.json`, { apiKey })).body.purchase.coupons).toHaveLength(2);
    expect((await claim(id)).status).toBe(200);
    const others = (await api.call('POST', '/users', { apiKey, body: { email: 'other-buyer@example.com' } })).body.user_id;
    expect((await claim(id, others)).status).toBe(422);
    expect((await release(id)).status).toBe(422);
  });

  it('releases a lapsed hold by its job and by the clock; a claim then takes fresh units', async () => {
    const id = (await reserve(3)).body.purchase.id;
    clock.advance(5 * 60_000 + 1);
    expect(await numLeft()).toBe(3);
    const claimed = await claim(id);
    expect(claimed.body.purchase.fulfillment_state).toBe('fulfilled');
    expect(await numLeft()).toBe(0);
    const late = await reserve(1);
    expect(late.status).toBe(422);
    expect(late.body).toEqual({ status: 'error', error_type: 'cannot_fufill', error_msg: 'the deal is sold out' });
  });

  it('reads a reservation released from the instant its hold lapsed, with no job run; a claim then buys fresh units, or fails sold out', async () => {
    const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'late-buyer@example.com' } })).body.user_id;
    const lapsing = (await reserve(2, 'lapsing-deal')).body.purchase.id;
    const shown = async (id: string) => {
      const { payment_state, fulfillment_state } = (await api.call('GET', `/purchases/${id}`, { apiKey })).body.purchase;
      return [payment_state, fulfillment_state];
    };
    clock.advance(5 * 60_000 - 1);
    expect(await shown(lapsing)).toEqual(['pending', 'reserved']);
    clock.advance(1);
    expect(await shown(lapsing)).toEqual(['pending', 'released']);
    // No release job ran (its timer counts real time): the hold lapsed by the clock alone.
    const inventory = await api.get(EventStore).readStream('inventory-lapsing-deal');
    expect(inventory.some((e) => e.type === 'UnitsReleased')).toBe(false);
    expect(await numLeft('lapsing-deal')).toBe(3);

    // Two of the three units reserved by another: the claim finds one, and sells nothing.
    const other = (await reserve(2, 'lapsing-deal')).body.purchase.id;
    const refused = await claim(lapsing, buyer);
    expect(refused.status).toBe(422);
    expect(refused.body.error_type).toBe('cannot_fufill');
    expect(await shown(lapsing)).toEqual(['pending', 'released']);
    expect(await numLeft('lapsing-deal')).toBe(1);
    // Released, they are there again: the claim buys them.
    expect((await release(other)).status).toBe(200);
    const claimed = await claim(lapsing, buyer);
    expect(claimed.status).toBe(200);
    expect(claimed.body.purchase).toMatchObject({ payment_state: 'charged', fulfillment_state: 'fulfilled', user_id: buyer });
    expect(claimed.body.purchase.coupons).toHaveLength(2);
    expect(await shown(lapsing)).toEqual(['charged', 'fulfilled']);
    expect(await numLeft('lapsing-deal')).toBe(1);
  });

  it('releases a hold by the sweep, which, run while the hold is live, comes back at its expiry', async () => {
    const id = (await reserve(1, 'dozen-deal')).body.purchase.id;
    const released = async () =>
      (await api.get(EventStore).readStream('inventory-dozen-deal')).some(
        (e) => e.type === 'UnitsReleased' && (e.data as { holdId: string }).holdId === id,
      );
    // The reservation arms nothing of its own; the sweep run now (a timer that fired early, say)
    // finds the hold live, releases nothing, and arms itself for the hold's expiry.
    expect((await api.get(Scheduler).list(1000)).filter((j) => j.id.includes(id))).toEqual([]);
    const expiry = new Date(clock.now().getTime() + 5 * 60_000);
    await api.get(Scheduler).schedule({ id: 'release-due-holds', kind: 'release-due-holds', runAt: clock.now(), data: {} });
    const sweep = async () => (await api.get(Scheduler).list(1000)).find((j) => j.id === 'release-due-holds');
    const armed = await eventually(sweep, (j) => j?.state === 'waiting' && j.runAt.getTime() > clock.now().getTime());
    expect(armed!.runAt.getTime()).toBeLessThanOrEqual(expiry.getTime());
    expect(await released()).toBe(false);
    // Past the expiry, a sweep releases it.
    clock.advance(5 * 60_000);
    await api.get(Scheduler).schedule({ id: 'release-due-holds', kind: 'release-due-holds', runAt: clock.now(), data: {} });
    expect(await eventually(released, (done) => done)).toBe(true);
  }, 90_000);

  it('lists the user purchases and coupons, filters coupons and redeems them once', async () => {
    const purchases = await api.call('GET', `/users/${userId}/purchases`, { apiKey });
    expect(purchases.body.purchases.every((p: { user_id: string }) => p.user_id === userId)).toBe(true);
    expect((await api.call('GET', `/users/${userId}/purchases?count=true`, { apiKey })).body).toEqual({
      status: 'success',
      count: purchases.body.purchases.length,
    });
    const coupons = (await api.call('GET', `/users/${userId}/coupons`, { apiKey })).body.coupons;
    expect(coupons.length).toBe(5);
    const redeemed = await api.call('PUT', `/users/${userId}/coupons/${coupons[0].id}/redeem`, { apiKey });
    expect(redeemed.body.coupon).toMatchObject({ id: coupons[0].id, state: 'redeemed', redeemed_at: 'Mon Jun 15 12:00:00 UTC 2026' });
    const again = await api.call('PUT', `/coupons/${coupons[0].id}/redeem`, { apiKey });
    expect(again.status).toBe(422);
    expect(again.body.errors).toEqual([{ type: 'invalid', resource: 'coupon', field: 'state', message: 'is already redeemed' }]);
    expect(
      (await api.call('GET', `/users/${userId}/coupons?filter=redeemed`, { apiKey })).body.coupons.map((c: { id: string }) => c.id),
    ).toEqual([coupons[0].id]);
    expect((await api.call('GET', `/users/${userId}/coupons?filter=valid&count=true`, { apiKey })).body).toEqual({
      status: 'success',
      count: 4,
    });
    clock.set('2027-01-02T00:00:00Z');
    expect((await api.call('GET', `/users/${userId}/coupons?filter=expired&count=true`, { apiKey })).body).toEqual({
      status: 'success',
      count: 4,
    });
    expect((await api.call('PUT', `/coupons/${coupons[1].id}/redeem`, { apiKey })).body.errors[0].message).toBe('has expired');
  });

  it("lists a user's coupons of one purchase in their number order, across pages (-2 before -10)", async () => {
    const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'dozen@example.com' } })).body.user_id;
    const id = (await reserve(12, 'dozen-deal')).body.purchase.id;
    expect((await claim(id, buyer)).status).toBe(200);
    const pages = await Promise.all(
      [1, 2, 3].map(async (page) =>
        (await api.call('GET', `/users/${buyer}/coupons?per_page=5&page=${page}`, { apiKey })).body.coupons.map(
          (c: { id: string }) => c.id,
        ),
      ),
    );
    expect(pages.flat()).toEqual(Array.from({ length: 12 }, (_, i) => `${id}-${i + 1}`));
  });

  it('counts the units a user bought before against max_per_user when claiming; a refused claim changes nothing', async () => {
    const [first, second] = await Promise.all(
      ['limit-first@example.com', 'limit-second@example.com'].map(
        async (email) => (await api.call('POST', '/users', { apiKey, body: { email } })).body.user_id,
      ),
    );
    expect((await reserve(3, 'two-per-user')).body).toEqual({
      status: 'error',
      error_type: 'cannot_fufill',
      error_msg: 'at most 2 per user',
    });
    const bought = (await reserve(1, 'two-per-user')).body.purchase.id;
    expect((await claim(bought, first)).status).toBe(200);
    const upToLimit = (await reserve(1, 'two-per-user')).body.purchase.id;
    expect((await claim(upToLimit, first)).body.purchase).toMatchObject({ fulfillment_state: 'fulfilled', user_id: first });

    const over = (await reserve(1, 'two-per-user')).body.purchase.id;
    const refused = await claim(over, first);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ status: 'error', error_type: 'cannot_fufill', error_msg: 'at most 2 per user; already bought 2' });
    expect((await api.call('GET', `/purchases/${over}`, { apiKey })).body.purchase).toMatchObject({
      payment_state: 'pending',
      fulfillment_state: 'reserved',
      user_id: null,
      coupons: [],
    });
    expect(await numLeft('two-per-user')).toBe(7);

    const claimed = await claim(over, second);
    expect(claimed.status).toBe(200);
    expect(claimed.body.purchase).toMatchObject({
      payment_state: 'charged',
      fulfillment_state: 'fulfilled',
      user_id: second,
      number_bought: 1,
    });
    const again = await claim(upToLimit, first);
    expect(again.status).toBe(200);
    expect(again.body.purchase).toMatchObject({ fulfillment_state: 'fulfilled', user_id: first });
    expect(again.body.purchase.coupons.map((c: { id: string }) => c.id)).toEqual([`${upToLimit}-1`]);

    const released = (await reserve(1, 'two-per-user')).body.purchase.id;
    expect((await claim(released, first)).status).toBe(422);
    expect((await release(released)).body.purchase).toMatchObject({ payment_state: 'pending', fulfillment_state: 'released' });
    expect(await numLeft('two-per-user')).toBe(7);
  });

  it('keeps the per-user limit when one user claims five reservations and buys with a card at the same moment: one sale', async () => {
    const racer = (await api.call('POST', '/users', { apiKey, body: { email: 'racer@example.com' } })).body.user_id;
    const card = (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: racer, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    const reserved = await Promise.all(
      Array.from({ length: 5 }, async () => (await reserve(1, 'one-per-user')).body.purchase.id as string),
    );
    const answers = await Promise.all([
      ...reserved.map((id) => claim(id, racer)),
      api.call('POST', '/purchases', {
        apiKey,
        body: { deal_id: 'one-per-user', quantity: 1, user_id: racer, credit_card_id: card, expected_price_per_unit: 4900 },
      }),
    ]);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.map((a) => [a.status, a.body.error_type])).toEqual(Array(5).fill([422, 'cannot_fufill']));
    for (const a of refused) expect(a.body.error_msg).toMatch(/^at most 1 per user; already (bought 1|bought 0 and holding 1)$/);
    expect((await api.call('GET', `/users/${racer}/purchases?count=true`, { apiKey })).body.count).toBeGreaterThanOrEqual(1);
    const coupons = (await api.call('GET', `/users/${racer}/coupons`, { apiKey })).body.coupons;
    expect(coupons).toHaveLength(1);
    // The refused claims stay reserved (their units held until released or lapsed): 10 − 1 sold − 4 or 5 held.
    expect(await numLeft('one-per-user')).toBe(10 - 1 - (answers[5].status === 200 ? 5 : 4));
  });

  it('refuses bad input and unknown records clearly', async () => {
    for (const count of [0, -1, 1.5, '2', 1001]) {
      expect([count, (await reserve(count)).body.errors]).toEqual([
        count,
        [{ type: 'invalid', resource: 'purchase', field: 'num_bought', message: 'must be a whole number from 1 to 1000' }],
      ]);
    }
    expect((await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: 'chicago-spa-day' } })).body.errors).toEqual([
      { type: 'missing_field', resource: 'purchase', field: 'num_bought', message: 'must be a whole number from 1 to 1000' },
    ]);
    expect((await api.call('POST', '/purchases/reserve', { apiKey, body: { num_bought: 1 } })).body.errors[0]).toMatchObject({
      field: 'deal_id',
      type: 'missing_field',
    });
    // A field sent with the wrong type is invalid, not missing.
    for (const wrong of [5, ['chicago-spa-day'], { id: 'chicago-spa-day' }]) {
      expect([wrong, (await reserve(1, wrong)).body.errors]).toEqual([
        wrong,
        [{ type: 'invalid', resource: 'purchase', field: 'deal_id', message: 'must be a string' }],
      ]);
    }
    const reserved = (await reserve(1, 'typed-deal')).body.purchase.id;
    expect((await claim(reserved, { id: userId } as never)).body.errors).toEqual([
      { type: 'invalid', resource: 'purchase', field: 'user_id', message: 'must be a string' },
    ]);
    expect((await release(reserved)).status).toBe(200);
    // The `.json` forms answer as the plain ones.
    const again = (await reserve(1, 'typed-deal')).body.purchase.id;
    expect((await api.call('PUT', `/purchases/${again}/release.json`, { apiKey })).body.purchase.fulfillment_state).toBe('released');
    const claimed = (await reserve(1, 'typed-deal')).body.purchase.id;
    expect(
      (await api.call('PUT', `/purchases/${claimed}/claim.json`, { apiKey, body: { user_id: userId } })).body.purchase.fulfillment_state,
    ).toBe('fulfilled');
    expect((await reserve(1, 'no-such-deal')).status).toBe(404);
    expect((await reserve(4, 'chicago-spa-day')).body.error_type).toBe('cannot_fufill');
    expect((await claim('nothing')).status).toBe(404);
    expect((await api.call('GET', '/purchases/nothing', { apiKey })).status).toBe(404);
  });

  it('sells exactly the units there are when 300 reservations race for 50; a refused one writes nothing', async () => {
    const outcomes = await Promise.all(Array.from({ length: 300 }, () => reserve(1, 'hot-deal')));
    const ok = outcomes.filter((r) => r.status === 200);
    const refused = outcomes.filter((r) => r.status === 422);
    expect(ok).toHaveLength(50);
    expect(refused).toHaveLength(250);
    for (const r of refused) expect(r.body.error_type).toBe('cannot_fufill');
    expect(await numLeft('hot-deal')).toBe(0);
    const claims = await Promise.all(ok.map((r) => claim(r.body.purchase.id)));
    expect(claims.every((c) => c.body.purchase.coupons.length === 1)).toBe(true);
    const deal = (await api.call('GET', '/deals/hot-deal', { apiKey })).body.deal;
    expect([deal.num_left, deal.number_sold, deal.soldout]).toEqual([0, 50, true]);
    // The log agrees with the views: 50 holds, each sold once, nothing else held.
    const log = await api.get(EventStore).readStream('inventory-hot-deal');
    expect(log.filter((e) => e.type === 'UnitsHeld')).toHaveLength(50);
    expect(new Set(log.filter((e) => e.type === 'UnitsSold').map((e) => (e.data as { holdId: string }).holdId)).size).toBe(50);
    expect(log.filter((e) => e.type === 'UnitsReleased')).toHaveLength(0);
    // A reservation and its hold are one write: the 250 refused left no purchase behind, reserved or released.
    const reservations = (await api.get(EventStore).readAll({ after: null, maxCount: 1_000_000 })).filter(
      (e) => e.type === 'PurchaseReserved' && (e.data as { deal: { dealId: string } }).deal.dealId === 'hot-deal',
    );
    expect(reservations).toHaveLength(50);
  });

  it('never answers a release while a claim keeps the units: a release after the claim sold them is refused, one before it makes the claim buy fresh units', async () => {
    const store = api.get(EventStore);
    const context = { now: clock.now(), metadata: OPERATOR };
    // The claim's first step (its sale of the held units) lands before the release.
    const first = (await reserve(1, 'race-deal')).body.purchase.id as string;
    await handleCommand(
      store,
      'inventory-race-deal',
      inventoryDecider,
      { type: 'SellHeldUnits', data: { dealId: 'race-deal', holdId: first } },
      context,
    );
    const late = await release(first);
    expect([late.status, late.body.errors]).toEqual([
      422,
      [{ type: 'invalid', resource: 'purchase', field: 'id', message: 'is being claimed: its units are sold' }],
    ]);
    expect((await claim(first)).body.purchase).toMatchObject({ payment_state: 'charged', fulfillment_state: 'fulfilled' });
    // The release's first step (the units back) lands before the claim: the claim buys fresh units, and the release is then refused as claimed.
    const second = (await reserve(1, 'race-deal')).body.purchase.id as string;
    await handleCommand(
      store,
      'inventory-race-deal',
      inventoryDecider,
      { type: 'ReleaseHold', data: { dealId: 'race-deal', holdId: second, reason: 'released' } },
      context,
    );
    expect((await claim(second)).body.purchase).toMatchObject({ fulfillment_state: 'fulfilled' });
    expect((await release(second)).body.errors[0].message).toBe('is claimed and can no longer be released');
    // Two units sold with a coupon each, one released and not sold: nothing given away.
    await api.settle();
    expect(await numLeft('race-deal')).toBe(8);
    const log = await store.readStream('inventory-race-deal');
    expect(log.filter((e) => e.type === 'UnitsSold').map((e) => (e.data as { holdId: string }).holdId)).toEqual([first, `${second}-r`]);
  });

  it('claims and releases only reservations: a card purchase or a reseller sale is refused, and nothing is sold for the attempt', async () => {
    const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'not-reserved@example.com' } })).body.user_id;
    const card = (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: buyer, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    const bought = (
      await api.call('POST', '/purchases', {
        apiKey,
        body: { deal_id: 'race-deal', quantity: 1, user_id: buyer, credit_card_id: card, expected_price_per_unit: 4900 },
      })
    ).body.purchase;
    const left = await numLeft('race-deal');
    const refusal = [
      {
        type: 'invalid',
        resource: 'purchase',
        field: 'id',
        message: 'is not a reservation: only a reserved purchase is claimed or released',
      },
    ];
    for (const reply of [await claim(bought.id), await claim(bought.id, buyer), await release(bought.id)])
      expect([reply.status, reply.body.errors]).toEqual([422, refusal]);
    expect((await api.call('GET', `/purchases/${bought.id}`, { apiKey })).body.purchase).toMatchObject({
      fulfillment_state: 'fulfilled',
      user_id: buyer,
    });
    const resold = (
      await api.call('POST', '/api/v3/resellers/purchases', {
        basic,
        body: {
          deal_id: 'race-deal',
          quantity: 1,
          transaction_reference: 'tx-not-reserved',
          transaction_date: '2026-06-15T11:00:00Z',
          transaction_amount: 4900,
          first_name: 'Ray',
          last_name: 'Sell',
        },
      })
    ).body;
    const leftAfterResale = await numLeft('race-deal');
    expect(leftAfterResale).toBe(left - 1);
    for (const reply of [await claim(resold.id), await release(resold.id)])
      expect([reply.status, reply.body.errors]).toEqual([422, refusal]);
    expect(await numLeft('race-deal')).toBe(leftAfterResale);
  });

  it('claims a live hold of a deal paused since, but takes no fresh units of it for a released reservation', async () => {
    const live = (await reserve(1, 'pausing-deal')).body.purchase.id as string;
    const released = (await reserve(1, 'pausing-deal')).body.purchase.id as string;
    await release(released);
    await api.importDeals([{ ...spaDay, id: 'pausing-deal', quantity: 10, max_per_user: undefined, state: 'paused' }]);
    expect((await reserve(1, 'pausing-deal')).body.error_msg).toBe('the deal is not on sale');
    // The hold was taken while the deal was on sale: its units are the buyer's.
    expect((await claim(live)).body.purchase).toMatchObject({ fulfillment_state: 'fulfilled' });
    const refused = await claim(released);
    expect([refused.status, refused.body]).toEqual([
      422,
      { status: 'error', error_type: 'cannot_fufill', error_msg: 'the deal is not on sale' },
    ]);
    expect((await api.call('GET', '/deals/pausing-deal', { apiKey })).body.deal).toMatchObject({ number_sold: 1 });
  });

  it('sells no vouchers that expired while their reservation was live', async () => {
    const id = (await reserve(1, 'expiring-deal')).body.purchase.id as string;
    clock.set('2026-06-15T12:03:00Z');
    const refused = await claim(id);
    expect([refused.status, refused.body]).toEqual([
      422,
      { status: 'error', error_type: 'cannot_fufill', error_msg: "the deal's vouchers have expired" },
    ]);
    expect((await api.call('GET', '/deals/expiring-deal', { apiKey })).body.deal).toMatchObject({ number_sold: 0 });
  });
});
