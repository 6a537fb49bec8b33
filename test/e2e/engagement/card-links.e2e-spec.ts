import { EventStore, ManualClock } from '@deals/kernel';
import { Reply, runCli, TestApi } from '../../support/api-harness';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';

describe('card links: POST /card_links, PUT link/unlink/redeem, GET /users/:user_id/card_links', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let otherKey: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner()).apiKey;
    otherKey = (await api.createPartner('Other')).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([
      { ...cardLinked, merchant_id: 'bean-there' },
      {
        ...cardLinked,
        id: 'chicago-bagel-back',
        incentive_amount: undefined,
        incentive_percentage: 20,
        maximum_allowance: 1000,
        num_qualifying: 2,
      },
      { ...cardLinked, id: 'chicago-tiny', max_linkage: 2 },
      { ...cardLinked, id: 'chicago-paused-back', state: 'paused' },
      { ...cardLinked, id: 'chicago-ended-back', start_at: '2026-06-01T00:00:00Z', end_at: '2026-06-10T00:00:00Z' },
      spaDay,
    ]);
  });
  afterAll(() => api.close());

  const newUser = async (key = apiKey) => {
    const reply = await api.call('POST', '/users', { apiKey: key, body: { email: `u${Math.random().toString(36).slice(2)}@example.com` } });
    return reply.body.user_id as string;
  };
  const link = (body: unknown, key = apiKey, query = '') => api.call('POST', `/card_links${query}`, { apiKey: key, body });
  const move = (id: string, to: 'link' | 'unlink', key = apiKey) => api.call('PUT', `/card_links/${id}/${to}`, { apiKey: key });
  const redeem = (id: string, body: unknown, key = apiKey) => api.call('PUT', `/card_links/${id}/redeem`, { apiKey: key, body });
  const list = (userId: string, query = '', key = apiKey) => api.call('GET', `/users/${userId}/card_links${query}`, { apiKey: key });
  const tx = (reference: string, amount: unknown, extra: Record<string, unknown> = {}) => ({
    transaction_reference: reference,
    transaction_amount: amount,
    transaction_date: '2026-06-15T12:30:00',
    ...extra,
  });
  const failure = (reply: Reply, status: number, errorType: string, field?: string) => {
    expect(reply.status).toBe(status);
    expect(reply.body).toMatchObject({ status: 'error', error_type: errorType });
    if (field) expect(reply.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  };
  const redemptions = async (cardLinkId: string) =>
    (await api.get(EventStore).readStream(`cardlink-${cardLinkId}`)).filter((e) => e.type === 'CardLinkRedeemed').map((e) => e.data as any);

  it('links a user to a card-linked deal: {status, card_link}, listed by the user', async () => {
    const user = await newUser();
    const reply = await link({ user_id: user, deal_id: 'chicago-coffee-back' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      status: 'success',
      card_link: { id: expect.any(String), deal_id: 'chicago-coffee-back', user_id: user, merchant_id: 'bean-there', state: 'linked' },
    });
    expect((await list(user)).body).toEqual({ status: 'success', card_links: [reply.body.card_link] });
    expect((await list(user, '?count=true')).body).toEqual({ status: 'success', count: 1 });
  });

  it('answers the same link when linked again, relinking it if it was unlinked; never a second link', async () => {
    const user = await newUser();
    const first = (await link({ user_id: user, deal_id: 'chicago-coffee-back' })).body.card_link;
    expect((await link({ user_id: user, deal_id: 'chicago-coffee-back' })).body.card_link).toEqual(first);
    expect((await move(first.id, 'unlink')).body.card_link.state).toBe('unlinked');
    expect((await link({ user_id: user, deal_id: 'chicago-coffee-back' })).body.card_link).toEqual(first);
    const racing = await Promise.all(Array.from({ length: 20 }, () => link({ user_id: user, deal_id: 'chicago-bagel-back' })));
    expect(new Set(racing.map((r) => r.body.card_link.id)).size).toBe(1);
    expect((await list(user, '?count=true')).body.count).toBe(2);
  });

  it('links several deals: a comma-separated deal_ids, a JSON array, or deal_ids[] in the query, answered in the order given', async () => {
    const user = await newUser();
    const text = await link({ user_id: user, deal_ids: 'chicago-bagel-back,chicago-coffee-back' });
    expect(text.status).toBe(200);
    expect(text.body.card_links.map((l: { deal_id: string }) => l.deal_id)).toEqual(['chicago-bagel-back', 'chicago-coffee-back']);
    const array = await link({ user_id: user, deal_ids: ['chicago-coffee-back', 'chicago-bagel-back'] });
    expect(array.body.card_links.map((l: { id: string }) => l.id)).toEqual([text.body.card_links[1].id, text.body.card_links[0].id]);
    const query = await link(undefined, apiKey, `?user_id=${user}&deal_ids[]=chicago-coffee-back&deal_ids[]=chicago-bagel-back`);
    expect(query.body.card_links.map((l: { id: string }) => l.id)).toEqual(array.body.card_links.map((l: { id: string }) => l.id));
  });

  it('links all the deals or none: a refusal names the deal, and the places taken are given back', async () => {
    const user = await newUser();
    failure(await link({ user_id: user, deal_ids: 'chicago-coffee-back,chicago-spa-day' }), 422, 'validation_failed', 'deal_ids');
    failure(await link({ user_id: user, deal_ids: ['chicago-coffee-back', 'nope'] }), 404, 'find_failed');
    expect((await list(user, '?count=true')).body.count).toBe(0);
    // chicago-tiny has two places: the second user's call takes the last one, the third's is refused and gives back its coffee place.
    const [a, b, c] = [await newUser(), await newUser(), await newUser()];
    expect((await link({ user_id: a, deal_id: 'chicago-tiny' })).status).toBe(200);
    expect((await link({ user_id: b, deal_ids: 'chicago-tiny' })).status).toBe(200);
    const refused = await link({ user_id: c, deal_ids: 'chicago-coffee-back,chicago-tiny' });
    failure(refused, 422, 'validation_failed', 'deal_id');
    expect(refused.body.errors[0].message).toContain('max_linkage of 2');
    expect((await list(c, '?count=true')).body.count).toBe(0);
    const places = await api.get(EventStore).readStream('cardlinkage-chicago-coffee-back');
    const mine = places.filter((e) => (e.data as { userId: string }).userId === c).map((e) => e.type);
    expect(mine).toEqual(['CardLinkPlaceTaken', 'CardLinkPlaceReturned']);
    // The place is c's again on its next call.
    expect((await link({ user_id: c, deal_id: 'chicago-coffee-back' })).status).toBe(200);
  });

  it('refuses deals that are not card-linked or not on sale, unknown deals and users, and a deleted user', async () => {
    const user = await newUser();
    failure(await link({ user_id: user, deal_id: 'chicago-spa-day' }), 422, 'validation_failed', 'deal_id');
    failure(await link({ user_id: user, deal_id: 'chicago-paused-back' }), 422, 'validation_failed', 'deal_id');
    failure(await link({ user_id: user, deal_id: 'chicago-ended-back' }), 422, 'validation_failed', 'deal_id');
    failure(await link({ user_id: user, deal_id: 'nope' }), 404, 'find_failed');
    failure(await link({ user_id: 'nobody', deal_id: 'chicago-coffee-back' }), 404, 'find_failed');
    const linked = (await link({ user_id: user, deal_id: 'chicago-coffee-back' })).body.card_link;
    await move(linked.id, 'unlink');
    expect((await api.call('PUT', `/users/${user}`, { apiKey, body: { is_deleted: true } })).status).toBe(200);
    failure(await link({ user_id: user, deal_id: 'chicago-bagel-back' }), 404, 'find_failed');
    failure(await move(linked.id, 'link'), 422, 'validation_failed', 'user_id');
    // Its records stay.
    expect((await list(user)).body.card_links).toEqual([{ ...linked, state: 'unlinked' }]);
  });

  it('refuses malformed calls with error bodies naming the field', async () => {
    const user = await newUser();
    failure(await link({ deal_id: 'chicago-coffee-back' }), 422, 'validation_failed', 'user_id');
    const missing = await link({ user_id: user });
    failure(missing, 422, 'validation_failed', 'deal_id');
    // The schema's refusals name the card link, as the handler's do.
    expect(missing.body.errors[0].resource).toBe('card_link');
    expect((await link({ user_id: user }, apiKey, '?deal_ids[]=')).body.errors[0]).toMatchObject({
      resource: 'card_link',
      field: 'deal_ids',
    });
    failure(
      await link({ user_id: user, deal_id: 'chicago-coffee-back', deal_ids: 'chicago-bagel-back' }),
      422,
      'validation_failed',
      'deal_ids',
    );
    failure(await link({ user_id: user, deal_ids: 'chicago-coffee-back,chicago-coffee-back' }), 422, 'validation_failed', 'deal_ids');
    failure(await link({ user_id: user, deal_ids: [1, 2] }), 422, 'validation_failed', 'deal_ids');
    failure(await link({ user_id: user, deal_ids: ' , ' }), 422, 'validation_failed', 'deal_ids');
    failure(await link({ user_id: 5, deal_id: 'chicago-coffee-back' }), 422, 'validation_failed', 'user_id');
    failure(await link({ user_id: 'x'.repeat(5000), deal_id: 'chicago-coffee-back' }), 422, 'validation_failed', 'user_id');
    failure(await list(user, '?filter=linked,gone'), 422, 'validation_failed', 'filter');
    failure(await list(user, '?per_page=0'), 422, 'validation_failed', 'per_page');
    failure(await move('nope', 'unlink'), 404, 'find_failed');
    failure(await redeem('nope', tx('t', 100)), 404, 'find_failed');
  });

  it('moves linked ⇄ unlinked, idempotently; lists by state', async () => {
    const user = await newUser();
    const [coffee, bagel] = (await link({ user_id: user, deal_ids: 'chicago-coffee-back,chicago-bagel-back' })).body.card_links;
    const unlinked = await move(coffee.id, 'unlink');
    expect(unlinked.body).toEqual({ status: 'success', card_link: { ...coffee, state: 'unlinked' } });
    expect((await move(coffee.id, 'unlink')).body.card_link.state).toBe('unlinked');
    expect((await list(user, '?filter=unlinked')).body.card_links).toEqual([{ ...coffee, state: 'unlinked' }]);
    expect((await list(user, '?filter=linked')).body.card_links).toEqual([bagel]);
    expect((await list(user, '?filter=linked,unlinked&count=true')).body.count).toBe(2);
    expect((await list(user, '?per_page=1&page=2')).body.card_links).toHaveLength(1);
    expect((await move(coffee.id, 'link')).body.card_link.state).toBe('linked');
    expect((await move(coffee.id, 'link')).body.card_link.state).toBe('linked');
  });

  it('records qualifying transactions with their incentive and fee, and is fulfilled by num_qualifying; a fulfilled link moves no more', async () => {
    const user = await newUser();
    // bagel: 20% of the amount, at most 1000 in all, fulfilled by the second qualifying transaction; min_spend 2000.
    const bagel = (await link({ user_id: user, deal_id: 'chicago-bagel-back' })).body.card_link;
    expect((await redeem(bagel.id, tx('b-1', 1999))).body).toEqual({ status: 'success' });
    expect((await redeem(bagel.id, tx('b-2', 4000))).body).toEqual({ status: 'success' });
    expect((await list(user, '?filter=linked')).body.card_links).toHaveLength(1);
    expect((await redeem(bagel.id, tx('b-3', 9000))).status).toBe(200);
    expect((await list(user, '?filter=fulfilled')).body.card_links).toEqual([{ ...bagel, state: 'fulfilled' }]);
    const recorded = await redemptions(bagel.id);
    expect(recorded.map((r) => [r.transactionReference, r.qualifies, r.incentiveCents, r.feeCents])).toEqual([
      ['b-1', false, 0, 0],
      ['b-2', true, 800, 25 + 400],
      ['b-3', true, 200, 25 + 900], // 20% is 1800; 200 left of the 1000 allowance
    ]);
    failure(await move(bagel.id, 'unlink'), 422, 'validation_failed', 'state');
    failure(await move(bagel.id, 'link'), 422, 'validation_failed', 'state');
    failure(await redeem(bagel.id, tx('b-4', 5000)), 422, 'validation_failed', 'state');
    // A repeat of a recorded transaction still answers success, and records nothing.
    expect((await redeem(bagel.id, tx('b-3', 9000))).status).toBe(200);
    expect(await redemptions(bagel.id)).toHaveLength(3);
  });

  it('is fulfilled by max_redemption; redeems from linked only', async () => {
    const user = await newUser();
    const coffee = (await link({ user_id: user, deal_id: 'chicago-coffee-back', deal_ids: undefined })).body.card_link;
    await move(coffee.id, 'unlink');
    failure(await redeem(coffee.id, tx('c-1', 3000)), 422, 'validation_failed', 'state');
    await move(coffee.id, 'link');
    expect((await redeem(coffee.id, tx('c-1', 1000, { max_redemption: 'true' }))).status).toBe(200);
    expect((await list(user)).body.card_links[0].state).toBe('fulfilled');
    expect((await redemptions(coffee.id)).map((r) => [r.qualifies, r.incentiveCents, r.maxRedemption])).toEqual([[false, 0, true]]);
  });

  it('records a transaction reference once per link, also when sent many times at once; other facts under it are refused', async () => {
    const user = await newUser();
    const coffee = (await link({ user_id: user, deal_id: 'chicago-coffee-back' })).body.card_link;
    await move(coffee.id, 'unlink');
    await move(coffee.id, 'link');
    const replies = await Promise.all(
      Array.from({ length: 25 }, () => redeem(coffee.id, tx('same', 2500, { transaction_date: '2026-06-15T07:30:00-05:00' }))),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(25).fill(200));
    const recorded = await redemptions(coffee.id);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      transactionDate: '2026-06-15T07:30:00-05:00',
      transactionAt: '2026-06-15T12:30:00.000Z',
      incentiveCents: 500,
    });
    failure(await redeem(coffee.id, tx('same', 2600)), 422, 'validation_failed', 'transaction_reference');
  });

  it('refuses malformed transactions naming the field', async () => {
    const user = await newUser();
    const coffee = (await link({ user_id: user, deal_id: 'chicago-coffee-back' })).body.card_link;
    for (const [body, field] of [
      [{ transaction_date: '2026-06-15T12:30:00', transaction_reference: 'r' }, 'transaction_amount'],
      [tx('r', 12.5), 'transaction_amount'],
      [tx('r', -1), 'transaction_amount'],
      [tx('r', 0), 'transaction_amount'],
      [tx('r', '1e3'), 'transaction_amount'],
      [tx('r', 10 ** 13), 'transaction_amount'],
      [tx('r', 100, { transaction_date: '2026-06-15' }), 'transaction_date'],
      [tx('r', 100, { transaction_date: '2026-02-30T10:00:00' }), 'transaction_date'],
      [tx('r', 100, { transaction_date: '15/06/2026 10:00' }), 'transaction_date'],
      [tx('r', 100, { transaction_date: 20260615 }), 'transaction_date'],
      [tx('r', 100, { transaction_date: '2026-06-15T11:00:00' }), 'transaction_date'], // before the link
      [tx('r', 100, { transaction_date: '2026-06-17T12:30:00' }), 'transaction_date'], // in the future
      [tx('', 100), 'transaction_reference'],
      [tx('x'.repeat(256), 100), 'transaction_reference'],
      [tx('r', 100, { max_redemption: 'maybe' }), 'max_redemption'],
    ] as const)
      failure(await redeem(coffee.id, body), 422, 'validation_failed', field);
    expect(await redemptions(coffee.id)).toHaveLength(0);
  });

  it('counts a transaction dated in the second of the link, or up to CARD_LINK_CLOCK_SKEW_S before it, as after it', async () => {
    clock.set('2026-06-15T12:00:00.750Z');
    try {
      const user = await newUser();
      const coffee = (await link({ user_id: user, deal_id: 'chicago-coffee-back' })).body.card_link;
      expect((await redeem(coffee.id, tx('same-second', 100, { transaction_date: '2026-06-15T12:00:00' }))).status).toBe(200);
      expect((await redeem(coffee.id, tx('skewed', 100, { transaction_date: '2026-06-15T11:55:01' }))).status).toBe(200);
      failure(
        await redeem(coffee.id, tx('earlier', 100, { transaction_date: '2026-06-15T11:54:59' })),
        422,
        'validation_failed',
        'transaction_date',
      );
      expect((await redemptions(coffee.id)).map((r) => r.transactionReference)).toEqual(['same-second', 'skewed']);
    } finally {
      clock.set('2026-06-15T12:00:00Z');
    }
  });

  it('takes a transaction in phases: authorised earns nothing, cleared credits, refunded reverses; the link follows', async () => {
    const user = await newUser();
    const id = (await link({ user_id: user, deal_id: 'chicago-bagel-back' })).body.card_link.id;
    const phase = (reference: string, body: Record<string, unknown>, key = apiKey) =>
      api.call('PUT', `/card_links/${id}/transactions/${encodeURIComponent(reference)}`, {
        apiKey: key,
        body: { transaction_date: '2026-06-15T12:30:00', ...body },
      });
    const state = async () => (await list(user)).body.card_links[0].state;

    const authorised = await phase('t/1', { phase: 'authorised', transaction_amount: 3000 });
    expect(authorised.status).toBe(200);
    expect(authorised.body.card_transaction).toMatchObject({
      id: 't/1',
      card_link_id: id,
      phase: 'authorised',
      authorised_amount: 3000,
      cleared_amount: null,
      incentive_cents: 0,
      fee_cents: 0,
      qualifies: false,
    });
    // The cleared amount earns: 20% of 3200, and a fee of 25 + 10%.
    const cleared = await phase('t/1', { phase: 'cleared', transaction_amount: 3200 });
    expect(cleared.body.card_transaction).toMatchObject({
      phase: 'cleared',
      cleared_amount: 3200,
      incentive_cents: 640,
      fee_cents: 345,
      qualifies: true,
    });
    expect((await phase('t/1', { phase: 'cleared', transaction_amount: 3200 })).body.card_transaction).toEqual(
      cleared.body.card_transaction,
    );
    failure(await phase('t/1', { phase: 'cleared', transaction_amount: 3100 }), 422, 'validation_failed', 'transaction_amount');
    failure(await phase('t/1', { phase: 'paid', transaction_amount: 3100 }), 422, 'validation_failed', 'phase');
    // The second qualifying transaction earns what is left of the 1000 allowed, and fulfils the link.
    expect((await phase('t-2', { phase: 'cleared', transaction_amount: 2500 })).body.card_transaction).toMatchObject({
      incentive_cents: 360,
      fee_cents: 275,
    });
    expect(await state()).toBe('fulfilled');
    // Refunded whole: everything reversed, it no longer counts, and the link is linked again.
    const refunded = await phase('t-2', { phase: 'refunded', transaction_amount: 2500 });
    expect(refunded.body.card_transaction).toMatchObject({
      phase: 'refunded',
      refunded_amount: 2500,
      qualifies: false,
      incentive_reversed_cents: 360,
      fee_reversed_cents: 275,
    });
    expect(await state()).toBe('linked');
    // Refunded in part: 2200 kept earns 440 of its 640 and a fee of 245 of its 345.
    expect((await phase('t/1', { phase: 'refunded', transaction_amount: 1000 })).body.card_transaction).toMatchObject({
      qualifies: true,
      incentive_reversed_cents: 200,
      fee_reversed_cents: 100,
    });
    failure(await phase('t-9', { phase: 'refunded', transaction_amount: 100 }), 422, 'validation_failed', 'transaction_reference');
    // A redemption is a cleared transaction: refundable in phases.
    expect((await redeem(id, tx('t-3', 2000))).status).toBe(200);
    expect((await phase('t-3', { phase: 'refunded', transaction_amount: 2001 })).status).toBe(422);
    expect((await phase('t-3', { phase: 'refunded', transaction_amount: 2000 })).body.card_transaction.incentive_reversed_cents).toBe(400);

    const listed = await api.call('GET', `/card_links/${id}/transactions`, { apiKey });
    expect(listed.body.card_transactions.map((t: { id: string; phase: string }) => [t.id, t.phase])).toEqual([
      ['t/1', 'refunded'],
      ['t-2', 'refunded'],
      ['t-3', 'refunded'],
    ]);
    expect((await api.call('GET', `/card_links/${id}/transactions?count=true`, { apiKey })).body).toEqual({ status: 'success', count: 3 });
    expect((await api.call('GET', `/card_links/${id}/transactions/t-2`, { apiKey })).body.card_transaction).toEqual(
      refunded.body.card_transaction,
    );
    // Another partner knows nothing of them.
    expect((await api.call('GET', `/card_links/${id}/transactions`, { apiKey: otherKey })).status).toBe(404);
    expect((await api.call('GET', `/card_links/${id}/transactions/t-2`, { apiKey: otherKey })).status).toBe(404);
    expect((await phase('t-4', { phase: 'cleared', transaction_amount: 2500 }, otherKey)).status).toBe(404);
    const events = (await api.get(EventStore).readStream(`cardlink-${id}`)).map((e) => e.type);
    expect(events).toEqual([
      'CardLinkOpened',
      'CardTransactionAuthorised',
      'CardTransactionCleared',
      'CardTransactionCleared',
      'CardLinkFulfilled',
      'CardTransactionRefunded',
      'CardLinkFulfilmentReversed',
      'CardTransactionRefunded',
      // t/1 still counts: t-3 is the second qualifying transaction again, and its refund undoes that.
      'CardLinkRedeemed',
      'CardLinkFulfilled',
      'CardTransactionRefunded',
      'CardLinkFulfilmentReversed',
    ]);
  });

  it("is another partner's to know nothing of: 404 on every call", async () => {
    const user = await newUser();
    const coffee = (await link({ user_id: user, deal_id: 'chicago-coffee-back' })).body.card_link;
    failure(await link({ user_id: user, deal_id: 'chicago-bagel-back' }, otherKey), 404, 'find_failed');
    failure(await move(coffee.id, 'unlink', otherKey), 404, 'find_failed');
    failure(await move(coffee.id, 'link', otherKey), 404, 'find_failed');
    failure(await redeem(coffee.id, tx('x-1', 3000), otherKey), 404, 'find_failed');
    failure(await list(user, '', otherKey), 404, 'find_failed');
    failure(await list(user, '?count=true', otherKey), 404, 'find_failed');
    expect(await redemptions(coffee.id)).toHaveLength(0);
    expect((await list(user)).body.card_links[0].state).toBe('linked');
  });

  it("acts for an access token's own user, within its scope", async () => {
    const user = await newUser();
    const other = await newUser();
    const otherLink = (await link({ user_id: other, deal_id: 'chicago-coffee-back' })).body.card_link;
    const issue = async (scope: string) =>
      (await api.call('POST', `/users/${user}/access_tokens`, { apiKey, body: { expires_in: 600, scope, access: 'read,write' } })).body
        .access_token.id as string;
    const token = await issue('card_link');
    const as = { headers: { authorization: `Bearer ${token}` } };
    const mine = await api.call('POST', '/card_links', { ...as, body: { deal_id: 'chicago-coffee-back' } });
    expect(mine.body.card_link.user_id).toBe(user);
    expect((await api.call('GET', `/users/${user}/card_links`, as)).body.card_links).toHaveLength(1);
    expect((await api.call('PUT', `/card_links/${mine.body.card_link.id}/unlink`, as)).body.card_link.state).toBe('unlinked');
    failure(await api.call('POST', '/card_links', { ...as, body: { user_id: other, deal_id: 'chicago-bagel-back' } }), 404, 'find_failed');
    failure(await api.call('PUT', `/card_links/${otherLink.id}/unlink`, as), 404, 'find_failed');
    failure(await api.call('GET', `/users/${other}/card_links`, as), 404, 'find_failed');
    // Its own link's transactions it may read, never report: what the card network says is the partner's word.
    const reported = { ...as, body: { phase: 'cleared', transaction_amount: 3000, transaction_date: '2026-06-15T12:30:00' } };
    failure(await api.call('PUT', `/card_links/${mine.body.card_link.id}/transactions/t-own`, reported), 403, 'forbidden');
    // A redemption is such a report (its clearing): refused too, at any amount, on its own link or another's.
    await api.call('PUT', `/card_links/${mine.body.card_link.id}/link`, as);
    failure(
      await api.call('PUT', `/card_links/${mine.body.card_link.id}/redeem`, { ...as, body: tx('A1', 1_000_000_000) }),
      403,
      'forbidden',
    );
    failure(await api.call('PUT', `/card_links/${otherLink.id}/redeem`, { ...as, body: tx('t-1', 3000) }), 403, 'forbidden');
    expect(await redemptions(mine.body.card_link.id)).toHaveLength(0);
    expect((await api.call('GET', `/card_links/${mine.body.card_link.id}/transactions`, as)).body.card_transactions).toEqual([]);
    failure(await api.call('GET', `/card_links/${otherLink.id}/transactions`, as), 404, 'find_failed');
    const coupons = { headers: { authorization: `Bearer ${await issue('coupon')}` } };
    failure(await api.call('GET', `/users/${user}/card_links`, coupons), 403, 'forbidden');
    const all = { headers: { authorization: `Bearer ${await issue('all')}` } };
    expect((await api.call('GET', `/users/${user}/card_links`, all)).status).toBe(200);
  });

  it('prints a link’s history with its totals: npm run cli -- audit:card-link', async () => {
    const user = await newUser();
    const coffee = (await link({ user_id: user, deal_id: 'chicago-coffee-back' })).body.card_link;
    await redeem(coffee.id, tx('a-1', 2500));
    const { stdout, code } = await runCli(api.dataDir, ['audit:card-link', coffee.id, '--json']);
    expect(code).toBe(0);
    const entries = JSON.parse(stdout);
    expect(entries.map((e: { type: string; linkState: string }) => [e.type, e.linkState])).toEqual([
      ['CardLinkPlaceTaken', 'linked'],
      ['CardLinkOpened', 'linked'],
      ['CardLinkRedeemed', 'linked'],
      ['CardLinkFulfilled', 'fulfilled'],
    ]);
    expect(entries[3]).toMatchObject({ incentiveCents: 500, feeCents: 25 + 250, actor: expect.stringMatching(/^partner:/) });
    const text = await runCli(api.dataDir, ['audit:card-link', coffee.id]);
    expect(text.stdout).toContain('incentives 500 cents, fees 275 cents');
  }, 120_000);
});
