import { ManualClock } from '@deals/kernel';
import { Reply, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';

describe('saved deals: POST /saved_deals, DELETE /saved_deals/:id, GET /users/:user_id/saved_deals', () => {
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
      spaDay,
      { ...spaDay, id: 'spa-approved', state: 'approved', start_at: '2026-06-16T00:00:00Z' },
      { ...spaDay, id: 'spa-landed', state: 'landed' },
      ...(['submitted', 'in-review', 'rejected', 'cancelled', 'deleted'] as const).map((state) => ({
        ...spaDay,
        id: `spa-${state}`,
        state,
      })),
    ]);
  });
  afterAll(() => api.close());

  const newUser = async (key = apiKey) =>
    (await api.call('POST', '/users', { apiKey: key, body: { email: `s${Math.random().toString(36).slice(2)}@example.com` } })).body
      .user_id as string;
  const save = (body: unknown, key = apiKey) => api.call('POST', '/saved_deals', { apiKey: key, body });
  const remove = (id: string, key = apiKey) => api.call('DELETE', `/saved_deals/${id}`, { apiKey: key });
  const list = (userId: string, query = '', key = apiKey) => api.call('GET', `/users/${userId}/saved_deals${query}`, { apiKey: key });
  const failure = (reply: Reply, status: number, errorType: string, field?: string) => {
    expect(reply.status).toBe(status);
    expect(reply.body).toMatchObject({ status: 'error', error_type: errorType });
    if (field) expect(reply.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  };

  it('saves a deal: {status, saved_deal}, listed by the user', async () => {
    const user = await newUser();
    const reply = await save({ user_id: user, deal_id: 'chicago-spa-day' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: 'success', saved_deal: { id: expect.any(String), deal_id: 'chicago-spa-day', user_id: user } });
    expect((await list(user)).body).toEqual({ status: 'success', saved_deals: [reply.body.saved_deal] });
    expect((await list(user, '?count=true')).body).toEqual({ status: 'success', count: 1 });
  });

  it('answers the one saved when saved again, also when twenty saves race; the same one after a delete', async () => {
    const user = await newUser();
    const replies = await Promise.all(Array.from({ length: 20 }, () => save({ user_id: user, deal_id: 'chicago-spa-day' })));
    const ids = new Set(replies.map((r) => r.body.saved_deal.id));
    expect(ids.size).toBe(1);
    const [id] = ids;
    expect((await remove(id)).body).toEqual({ status: 'success' });
    expect((await list(user, '?count=true')).body.count).toBe(0);
    failure(await remove(id), 404, 'find_failed');
    expect((await save({ user_id: user, deal_id: 'chicago-spa-day' })).body.saved_deal.id).toBe(id);
  });

  it('saves public deals only (approved and landed ones too), not submitted, in review, rejected, cancelled or deleted ones', async () => {
    const user = await newUser();
    expect((await save({ user_id: user, deal_id: 'spa-approved' })).status).toBe(200);
    expect((await save({ user_id: user, deal_id: 'spa-landed' })).status).toBe(200);
    for (const state of ['submitted', 'in-review', 'rejected', 'cancelled', 'deleted'])
      failure(await save({ user_id: user, deal_id: `spa-${state}` }), 422, 'validation_failed', 'deal_id');
    failure(await save({ user_id: user, deal_id: 'nope' }), 404, 'find_failed');
  });

  it('pages a user’s saved deals, the latest first', async () => {
    const user = await newUser();
    await save({ user_id: user, deal_id: 'chicago-spa-day' });
    clock.advance(1000);
    await save({ user_id: user, deal_id: 'spa-approved' });
    clock.advance(1000);
    await save({ user_id: user, deal_id: 'spa-landed' });
    const deals = (reply: Reply) => reply.body.saved_deals.map((s: { deal_id: string }) => s.deal_id);
    expect(deals(await list(user))).toEqual(['spa-landed', 'spa-approved', 'chicago-spa-day']);
    expect(deals(await list(user, '?per_page=2&page=2'))).toEqual(['chicago-spa-day']);
    failure(await list(user, '?per_page=1001'), 422, 'validation_failed', 'per_page');
  });

  it('refuses malformed calls, unknown and deleted users, with error bodies', async () => {
    const user = await newUser();
    failure(await save({ deal_id: 'chicago-spa-day' }), 422, 'validation_failed', 'user_id');
    failure(await save({ user_id: user }), 422, 'validation_failed', 'deal_id');
    failure(await save({ user_id: user, deal_id: 7 }), 422, 'validation_failed', 'deal_id');
    failure(await save({ user_id: user, deal_id: 'x'.repeat(129) }), 422, 'validation_failed', 'deal_id');
    failure(await save({ user_id: 'nobody', deal_id: 'chicago-spa-day' }), 404, 'find_failed');
    failure(await remove('nope'), 404, 'find_failed');
    failure(await list('nobody'), 404, 'find_failed');
    const saved = (await save({ user_id: user, deal_id: 'chicago-spa-day' })).body.saved_deal;
    await api.call('PUT', `/users/${user}`, { apiKey, body: { is_deleted: true } });
    failure(await save({ user_id: user, deal_id: 'spa-approved' }), 404, 'find_failed');
    // Its records stay.
    expect((await list(user)).body.saved_deals).toEqual([saved]);
  });

  it("is another partner's to know nothing of: 404 on every call", async () => {
    const user = await newUser();
    const saved = (await save({ user_id: user, deal_id: 'chicago-spa-day' })).body.saved_deal;
    failure(await save({ user_id: user, deal_id: 'spa-approved' }, otherKey), 404, 'find_failed');
    failure(await remove(saved.id, otherKey), 404, 'find_failed');
    failure(await list(user, '', otherKey), 404, 'find_failed');
    expect((await list(user)).body.saved_deals).toEqual([saved]);
  });

  it("acts for an access token's own user, within its scope", async () => {
    const user = await newUser();
    const other = await newUser();
    const theirs = (await save({ user_id: other, deal_id: 'chicago-spa-day' })).body.saved_deal;
    const issue = async (scope: string) =>
      (await api.call('POST', `/users/${user}/access_tokens`, { apiKey, body: { expires_in: 600, scope, access: 'read,write' } })).body
        .access_token.id as string;
    const as = { headers: { authorization: `Bearer ${await issue('saved_deal')}` } };
    const mine = await api.call('POST', '/saved_deals', { ...as, body: { deal_id: 'chicago-spa-day' } });
    expect(mine.body.saved_deal.user_id).toBe(user);
    expect((await api.call('GET', `/users/${user}/saved_deals`, as)).body.saved_deals).toEqual([mine.body.saved_deal]);
    failure(await api.call('POST', '/saved_deals', { ...as, body: { user_id: other, deal_id: 'spa-approved' } }), 404, 'find_failed');
    failure(await api.call('DELETE', `/saved_deals/${theirs.id}`, as), 404, 'find_failed');
    failure(await api.call('GET', `/users/${other}/saved_deals`, as), 404, 'find_failed');
    expect((await api.call('DELETE', `/saved_deals/${mine.body.saved_deal.id}`, as)).status).toBe(200);
    const wrongScope = { headers: { authorization: `Bearer ${await issue('card_link')}` } };
    failure(await api.call('GET', `/users/${user}/saved_deals`, wrongScope), 403, 'forbidden');
  });
});
