import { ManualClock } from '@deals/kernel';
import { Reply, TestApi } from '../../support/api-harness';
import { chicago, ongoingShipped, spaDay } from '../../support/catalogue-fixtures';
import { holdNextCharge } from '../../support/held-charge';
import { writtenState } from '../../support/written-state';

/**
 * POST /purchases/dry_run and POST /v1/purchases/full/dry_run.json, and the deprecated `dry_run: true`
 * on the purchase calls: the answer the purchase would get (what it would be, or its exact refusal),
 * and nothing written.
 */
describe('dry runs of a purchase', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let live: string;
  let sandbox: string;
  let buyer: string;
  let other: string;
  const cards: Record<string, string> = {};
  const visa = { number: '4242424242424242', verification_value: '123', month: '12', year: '2030', zip_code: '60601' };

  const storeCard = async (apiKey: string, user: string, number: string, month = 12, year = 2030): Promise<string> =>
    (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: user, number, verification_value: '123', month, year, zip_code: '60601' },
      })
    ).body.credit_card_id;
  const newUser = async (apiKey: string, email: string): Promise<string> =>
    (await api.call('POST', '/users', { apiKey, body: { email } })).body.user_id;

  beforeAll(async () => {
    api = await TestApi.start({ clock });
    const partner = await api.createPartner('Dry runner');
    live = partner.apiKey;
    sandbox = partner.sandbox!.apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([
      { ...spaDay, quantity: 10, max_per_user: 4, end_at: '2027-06-18T05:00:00Z' },
      { ...spaDay, id: 'dry-few', quantity: 2, max_per_user: undefined },
      { ...spaDay, id: 'dry-free', current_price: 0, quantity: 10 },
      { ...spaDay, id: 'dry-expired', expires_at: '2026-06-15T11:00:00Z', quantity: 10 },
      { ...spaDay, id: 'dry-later', state: 'approved', start_at: '2026-07-01T05:00:00Z', end_at: '2026-07-18T05:00:00Z', quantity: 10 },
      { ...ongoingShipped, quantity: 5 },
    ]);
    buyer = await newUser(live, 'dry-buyer@example.com');
    other = await newUser(live, 'dry-other@example.com');
    cards.visa = await storeCard(live, buyer, '4242424242424242');
    cards.other = await storeCard(live, other, '4242424242424242');
    cards.decline = await storeCard(live, buyer, '4000000000000002');
    cards.soon = await storeCard(live, buyer, '5555555555554444', 6, 2026);
  });
  afterAll(() => api.close());

  const order = (overrides: Record<string, unknown> = {}) => ({
    deal_id: 'chicago-spa-day',
    quantity: 2,
    user_id: buyer,
    credit_card_id: cards.visa,
    expected_price_per_unit: 4900,
    ...overrides,
  });
  /** A deprecated `dry_run: true` answers the dry run's own operation's body, which the purchase's description leaves out. */
  const legacy = (body: Record<string, unknown>) => (body.dry_run === true ? 'the deprecated dry_run: true' : undefined);
  const buy = (body: Record<string, unknown>, options: { apiKey?: string; headers?: Record<string, string> } = {}) =>
    api.call('POST', '/purchases', { apiKey: options.apiKey ?? live, headers: options.headers, body, undescribedBody: legacy(body) });
  const full = (body: Record<string, unknown>, apiKey = live) =>
    api.call('POST', '/v1/purchases/full.json', { apiKey, body, undescribedBody: legacy(body) });
  const buyDry = (body: Record<string, unknown>, options: { apiKey?: string; headers?: Record<string, string> } = {}) =>
    api.call('POST', '/purchases/dry_run', { apiKey: options.apiKey ?? live, headers: options.headers, body });
  const fullDry = (body: Record<string, unknown>, apiKey = live) => api.call('POST', '/v1/purchases/full/dry_run.json', { apiKey, body });
  const verdict = (reply: Reply) => ({ status: reply.status, body: reply.body });

  /** The dry run's answer, having checked it wrote nothing. */
  async function dry(call: () => Promise<Reply>): Promise<Reply> {
    const before = await writtenState(api);
    const reply = await call();
    expect(await writtenState(api)).toEqual(before);
    return reply;
  }

  it('answers what the purchase would be, and then the purchase is that', async () => {
    const foreseen = await dry(() => buyDry(order()));
    expect(foreseen.status).toBe(200);
    expect(foreseen.body).toEqual({
      status: 'success',
      dry_run: true,
      purchase: {
        deal_type: 'daily-deal',
        deal_id: 'chicago-spa-day',
        price: 4900,
        amount: 9800,
        number_bought: 2,
        user_id: buyer,
        credit_card_id: cards.visa,
        deal: {
          id: 'chicago-spa-day',
          deal_id: 'chicago-spa-day',
          title: spaDay.title,
          type: 'daily-deal',
          image_url: '/images/deals/chicago-spa-day.jpg',
          image_url_abs: expect.stringMatching(/\/images\/deals\/chicago-spa-day\.jpg$/),
        },
      },
      card: { credit_card_id: cards.visa, number: 'XXXX-XXXX-XXXX-4242', type: 'Visa', month: 12, year: 2030 },
      limit: { max_per_user: 4, units_bought: 0, units_held: 0, units_allowed: 4 },
      availability: { start_at: '2026-06-14T05:00:00Z', end_at: '2027-06-18T05:00:00Z', expires_at: '2026-12-31T23:59:00Z', num_left: 10 },
    });
    const made = await buy(order());
    expect(made.status).toBe(200);
    const { deal_type, deal_id, price, amount, number_bought, user_id, credit_card_id, deal } = made.body.purchase;
    expect({ deal_type, deal_id, price, amount, number_bought, user_id, credit_card_id, deal }).toEqual(foreseen.body.purchase);
    const next = await dry(() => buyDry(order({ quantity: 1 })));
    expect(next.body.limit).toEqual({ max_per_user: 4, units_bought: 2, units_held: 0, units_allowed: 2 });
    expect(next.body.availability.num_left).toBe(8);
  });

  it.each([
    ['an unknown deal (404)', () => order({ deal_id: 'no-such-deal' })],
    ['an unknown user (404)', () => order({ user_id: 'nobody' })],
    ['an unknown card (422)', () => order({ credit_card_id: 'no-card' })],
    ["another user's card (422)", () => order({ credit_card_id: cards.other })],
    ['a price that changed (422)', () => order({ expected_price_per_unit: 4500 })],
    ['more than the per-user limit leaves (422)', () => order({ quantity: 3 })],
    ['more units than are left (422)', () => order({ deal_id: 'dry-few', quantity: 3 })],
    ['a free deal (422)', () => order({ deal_id: 'dry-free', expected_price_per_unit: 0 })],
    ['expired vouchers (422)', () => order({ deal_id: 'dry-expired' })],
    ['a deal not on sale yet (422)', () => order({ deal_id: 'dry-later' })],
    [
      'a shipped deal without an address (422)',
      () => order({ deal_id: ongoingShipped.id, expected_price_per_unit: ongoingShipped.current_price }),
    ],
    ['a malformed request (422)', () => order({ quantity: 0 })],
  ])('refuses %s exactly as the purchase does', async (_, body) => {
    const foreseen = await dry(() => buyDry(body()));
    expect(foreseen.status).not.toBe(200);
    expect(verdict(await buy(body()))).toEqual(verdict(foreseen));
  });

  it('answers 409 already_charging while the user has a purchase being charged', async () => {
    const user = await newUser(live, 'dry-charging@example.com');
    const card = await storeCard(live, user, '4242424242424242');
    const held = holdNextCharge(api);
    const charging = buy(order({ user_id: user, credit_card_id: card, quantity: 1 }));
    await held.charging;
    try {
      const foreseen = await dry(() => buyDry(order({ user_id: user, credit_card_id: card, quantity: 1 })));
      expect(foreseen.status).toBe(409);
      expect(verdict(await buy(order({ user_id: user, credit_card_id: card, quantity: 1 })))).toEqual(verdict(foreseen));
    } finally {
      held.release();
    }
    expect((await charging).status).toBe(200);
  });

  it('does not foresee a processor decline: the dry run answers what would be charged, the purchase 422 declined', async () => {
    const foreseen = await dry(() => buyDry(order({ quantity: 1, credit_card_id: cards.decline })));
    expect(foreseen.status).toBe(200);
    expect((await buy(order({ quantity: 1, credit_card_id: cards.decline }))).body.error_type).toBe('declined');
  });

  it('claims and keeps no Idempotency-Key: the same key then makes the purchase', async () => {
    const headers = { 'Idempotency-Key': 'dry-then-real' };
    const foreseen = await dry(() => buyDry(order({ quantity: 1 }), { headers }));
    expect(foreseen.status).toBe(200);
    const again = await dry(() => buyDry(order({ quantity: 1 }), { headers }));
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const made = await buy(order({ quantity: 1 }), { headers });
    expect(made.status).toBe(200);
    expect(made.headers['idempotent-replayed']).toBeUndefined();
    expect(made.body.purchase.payment_state).toBe('charged');
    const repeated = await buy(order({ quantity: 1 }), { headers });
    expect(repeated.headers['idempotent-replayed']).toBe('true');
    expect(repeated.body).toEqual(made.body);
    // A malformed key is refused as the purchase would refuse it.
    const malformed = { 'Idempotency-Key': 'x'.repeat(256) };
    const real = await buy(order({ quantity: 1 }), { headers: malformed });
    expect(real.status).toBe(400);
    const dryMalformed = await dry(() => buyDry(order({ quantity: 1 }), { headers: malformed }));
    expect([dryMalformed.status, dryMalformed.body]).toEqual([real.status, real.body]);
  });

  it('takes a full purchase: a user and card it would make are made nowhere, and named null', async () => {
    const body = { deal_id: 'chicago-spa-day', quantity: 1, user: { email: 'dry-full@example.com' }, credit_card: visa };
    const foreseen = await dry(() => fullDry(body));
    expect(foreseen.status).toBe(200);
    expect(foreseen.body.purchase).toMatchObject({ amount: 4900, number_bought: 1, user_id: null, credit_card_id: null });
    expect(foreseen.body.card).toEqual({ credit_card_id: null, number: 'XXXX-XXXX-XXXX-4242', type: 'Visa', month: 12, year: 2030 });
    expect(foreseen.body.limit).toEqual({ max_per_user: 4, units_bought: 0, units_held: 0, units_allowed: 4 });
    const made = await full(body);
    expect(made.status).toBe(200);
    // With the records it has: the same verdicts, named as the purchase names them.
    const known = { deal_id: 'chicago-spa-day', user_id: buyer, credit_card_id: cards.other };
    for (const refused of [
      { ...known, quantity: 1 },
      { ...known, quantity: 3, credit_card_id: cards.visa, deal_id: 'dry-few' },
      { ...known, quantity: 5, credit_card_id: cards.visa },
      { ...known, quantity: 1, user_id: 'nobody' },
    ]) {
      const dryVerdict = verdict(await dry(() => fullDry(refused)));
      expect(dryVerdict.status).not.toBe(200);
      expect(verdict(await full(refused))).toEqual(dryVerdict);
    }
  });

  it('refuses in a full purchase a user it would make whose address a deleted user holds, as its registration does', async () => {
    const gone = await newUser(live, 'dry-deleted@example.com');
    expect((await api.call('PUT', `/users/${gone}`, { apiKey: live, body: { is_deleted: true } })).status).toBe(200);
    const body = { deal_id: 'chicago-spa-day', quantity: 1, user: { email: 'DRY-deleted@example.com' }, credit_card: visa };
    const dryVerdict = verdict(await dry(() => fullDry(body)));
    expect(dryVerdict).toEqual({
      status: 422,
      body: expect.objectContaining({
        errors: [{ type: 'invalid', resource: 'user', field: 'email', message: 'is already taken by another user' }],
      }),
    });
    expect(verdict(await full(body))).toEqual(dryVerdict);
  });

  it("takes sandbox credentials: the sandbox's own inventory and test cards", async () => {
    const user = await newUser(sandbox, 'dry-sandbox@example.com');
    const card = await storeCard(sandbox, user, '4242424242424242');
    const sandboxOrder = order({ user_id: user, credit_card_id: card, quantity: 1 });
    const foreseen = await dry(() => buyDry(sandboxOrder, { apiKey: sandbox }));
    expect(foreseen.status).toBe(200);
    expect(foreseen.body.availability.num_left).toBe(10);
    expect((await buy(sandboxOrder, { apiKey: sandbox })).status).toBe(200);
    const after = await dry(() => buyDry(sandboxOrder, { apiKey: sandbox }));
    expect(after.body.availability.num_left).toBe(9);
    // A card that is not a test card is refused in a sandbox, as the purchase refuses it.
    const real = { deal_id: 'chicago-spa-day', quantity: 1, user_id: user, credit_card: { ...visa, number: '4012888888881881' } };
    const dryVerdict = verdict(await dry(() => fullDry(real, sandbox)));
    expect(dryVerdict.status).toBe(422);
    expect(verdict(await full(real, sandbox))).toEqual(dryVerdict);
  });

  it('refuses a stored card past its expiry, as the purchase now does before any lock or hold', async () => {
    clock.set(new Date('2026-07-01T00:00:00Z'));
    const expired = order({ quantity: 1, credit_card_id: cards.soon });
    const foreseen = await dry(() => buyDry(expired));
    expect(verdict(foreseen)).toEqual({
      status: 422,
      body: {
        status: 'error',
        error_type: 'validation_failed',
        error_msg: expect.any(String),
        errors: [{ type: 'invalid', resource: 'credit_card', field: 'credit_card_id', message: 'has expired' }],
      },
    });
    expect(verdict(await buy(expired))).toEqual(verdict(foreseen));
  });

  it('still answers the dry run to the deprecated dry_run: true on both purchase calls, claiming no key', async () => {
    const headers = { 'Idempotency-Key': 'dry-legacy' };
    const stored = order({ quantity: 1 });
    const foreseen = await dry(() => buyDry(stored));
    expect(foreseen.status).toBe(200);
    const legacy = await dry(() => buy({ ...stored, dry_run: true }, { headers }));
    expect(verdict(legacy)).toEqual(verdict(foreseen));
    const entered = { deal_id: 'chicago-spa-day', quantity: 1, user: { email: 'dry-legacy@example.com' }, credit_card: visa };
    const fullForeseen = await dry(() => fullDry(entered));
    expect(fullForeseen.body.dry_run).toBe(true);
    expect(verdict(await dry(() => full({ ...entered, dry_run: true }, live)))).toEqual(verdict(fullForeseen));
    // Its key was neither claimed nor kept: the same key then makes the purchase.
    const made = await buy(stored, { headers });
    expect([made.status, made.headers['idempotent-replayed'], made.body.purchase.payment_state]).toEqual([200, undefined, 'charged']);
  });
});
