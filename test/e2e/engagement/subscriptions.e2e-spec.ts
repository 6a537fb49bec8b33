import type { RegionTerms } from '@deals/catalog';
import { ManualClock } from '@deals/kernel';
import { Reply, TestApi } from '../../support/api-harness';
import { chicago } from '../../support/catalogue-fixtures';

const boston: RegionTerms = {
  id: 'boston',
  name: 'Boston',
  active: true,
  city: 'Boston',
  state: 'MA',
  time_zone: 'America/New_York',
  latitude: 42.3601,
  longitude: -71.0589,
  postal_codes: ['02134'],
};

describe('subscriptions: POST/GET /users/:user_id/subscriptions, GET/PUT /subscriptions/:id', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let otherKey: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner()).apiKey;
    otherKey = (await api.createPartner('Other')).apiKey;
    await api.importRegions([chicago, boston]);
  });
  afterAll(() => api.close());

  const newUser = async (body: Record<string, unknown> = {}) => {
    const email = `m${Math.random().toString(36).slice(2)}@example.com`;
    const id = (await api.call('POST', '/users', { apiKey, body: { email, ...body } })).body.user_id as string;
    return { id, email };
  };
  const subscribe = (userId: string, body: unknown, key = apiKey) =>
    api.call('POST', `/users/${userId}/subscriptions`, { apiKey: key, body });
  const one = (id: string, key = apiKey) => api.call('GET', `/subscriptions/${id}`, { apiKey: key });
  const set = (id: string, body: unknown, key = apiKey) => api.call('PUT', `/subscriptions/${id}`, { apiKey: key, body });
  const list = (user: string, query = '', key = apiKey) =>
    api.call('GET', `/users/${encodeURIComponent(user)}/subscriptions${query}`, { apiKey: key });
  const failure = (reply: Reply, status: number, errorType: string, field?: string) => {
    expect(reply.status).toBe(status);
    expect(reply.body).toMatchObject({ status: 'error', error_type: errorType });
    if (field) expect(reply.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  };

  it('subscribes a user to the region of a zip: every field of a subscription', async () => {
    const { id: user } = await newUser({ source: 'spring-campaign' });
    const reply = await subscribe(user, { zip: 60601 });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      status: 'success',
      subscription: {
        id: expect.any(String),
        user_id: user,
        status: 'active',
        confirmed: true,
        region_id: 'chicago',
        region_name: 'Chicago',
        zip: '60601',
        created_at: 'Mon Jun 15 12:00:00 UTC 2026',
        source: 'spring-campaign',
      },
    });
    expect((await one(reply.body.subscription.id)).body).toEqual(reply.body);
    expect((await subscribe(user, { zip: '60602', source: 'footer' })).body.subscription).toEqual(reply.body.subscription);
  });

  it('reads a zip as a number or a string, keeping leading zeros: 2134 and "02134" are one Boston subscription', async () => {
    const { id: user } = await newUser();
    const number = await subscribe(user, { zip: 2134, source: 'footer' });
    expect(number.body.subscription).toMatchObject({ region_id: 'boston', zip: '02134', source: 'footer' });
    expect((await subscribe(user, { zip: '02134' })).body.subscription.id).toBe(number.body.subscription.id);
    expect((await subscribe(user, { zip: '2134' })).body.subscription.id).toBe(number.body.subscription.id);
    expect((await subscribe(user, { zip: '02134-1234' })).body.subscription.id).toBe(number.body.subscription.id);
    expect((await list(user, '?count=true')).body).toEqual({ status: 'success', count: 1 });
  });

  it('refuses a zip no region serves, and malformed zips, naming zip', async () => {
    const { id: user } = await newUser();
    failure(await subscribe(user, { zip: 99501 }), 422, 'validation_failed', 'zip');
    for (const zip of [undefined, '', 'abc', -1, 1.5, 100000, '123456', '2134-1234', true, { zip: 1 }])
      failure(await subscribe(user, zip === undefined ? {} : { zip }), 422, 'validation_failed', 'zip');
    failure(await subscribe(user, { zip: 60601, source: 5 }), 422, 'validation_failed', 'source');
  });

  it('one per user and region, also when twenty calls race; subscribing again reactivates an inactive one', async () => {
    const { id: user } = await newUser();
    const replies = await Promise.all(Array.from({ length: 20 }, () => subscribe(user, { zip: '60601' })));
    const ids = new Set(replies.map((r) => r.body.subscription.id));
    expect(ids.size).toBe(1);
    const [id] = ids;
    const off = await set(id, { status: 'inactive' });
    expect(off.body.subscription.status).toBe('inactive');
    expect((await set(id, { status: 'inactive' })).body.subscription.status).toBe('inactive');
    expect((await one(id)).body.subscription.status).toBe('inactive');
    expect((await subscribe(user, { zip: 60602 })).body.subscription).toMatchObject({ id, status: 'active' });
    expect((await set(id, { status: 'inactive' })).status).toBe(200);
    expect((await set(id, { status: 'active' })).body.subscription.status).toBe('active');
    failure(await set(id, { status: 'paused' }), 422, 'validation_failed', 'status');
    failure(await set(id, {}), 422, 'validation_failed', 'status');
  });

  it('lists a user’s subscriptions by id or by email, paged, the latest first', async () => {
    const { id: user, email } = await newUser();
    await subscribe(user, { zip: 60601 });
    clock.advance(1000);
    await subscribe(user, { zip: 2134 });
    const regions = (reply: Reply) => reply.body.subscriptions.map((s: { region_id: string }) => s.region_id);
    expect(regions(await list(user))).toEqual(['boston', 'chicago']);
    expect((await list(email)).body).toEqual((await list(user)).body);
    expect((await list(email.toUpperCase(), '?count=true')).body).toEqual({ status: 'success', count: 2 });
    expect(regions(await list(user, '?per_page=1&page=2'))).toEqual(['chicago']);
    failure(await list('nobody@example.com'), 404, 'find_failed');
    failure(await list(user, '?page=0'), 422, 'validation_failed', 'page');
  });

  it('refuses unknown and deleted users; a deleted user’s subscriptions stay', async () => {
    const { id: user } = await newUser();
    failure(await subscribe('nobody', { zip: 60601 }), 404, 'find_failed');
    failure(await one('nope'), 404, 'find_failed');
    failure(await set('nope', { status: 'active' }), 404, 'find_failed');
    const subscription = (await subscribe(user, { zip: 60601 })).body.subscription;
    await api.call('PUT', `/users/${user}`, { apiKey, body: { is_deleted: true } });
    failure(await subscribe(user, { zip: 2134 }), 404, 'find_failed');
    expect((await list(user)).body.subscriptions).toEqual([subscription]);
  });

  it("is another partner's to know nothing of: 404 on every call, the email form included", async () => {
    const { id: user, email } = await newUser();
    const subscription = (await subscribe(user, { zip: 60601 })).body.subscription;
    failure(await subscribe(user, { zip: 2134 }, otherKey), 404, 'find_failed');
    failure(await one(subscription.id, otherKey), 404, 'find_failed');
    failure(await set(subscription.id, { status: 'inactive' }, otherKey), 404, 'find_failed');
    failure(await list(user, '', otherKey), 404, 'find_failed');
    failure(await list(email, '', otherKey), 404, 'find_failed');
    expect((await one(subscription.id)).body.subscription.status).toBe('active');
  });

  it("acts for an access token's own user, within its scope, by id or email", async () => {
    const { id: user, email } = await newUser();
    const { id: other, email: otherEmail } = await newUser();
    const theirs = (await subscribe(other, { zip: 60601 })).body.subscription;
    const issue = async (scope: string) =>
      (await api.call('POST', `/users/${user}/access_tokens`, { apiKey, body: { expires_in: 600, scope, access: 'read,write' } })).body
        .access_token.id as string;
    const as = { headers: { authorization: `Bearer ${await issue('subscription')}` } };
    const mine = await api.call('POST', `/users/${user}/subscriptions`, { ...as, body: { zip: 60601 } });
    expect(mine.body.subscription.user_id).toBe(user);
    expect((await api.call('GET', `/subscriptions/${mine.body.subscription.id}`, as)).status).toBe(200);
    expect((await api.call('PUT', `/subscriptions/${mine.body.subscription.id}`, { ...as, body: { status: 'inactive' } })).status).toBe(
      200,
    );
    expect((await api.call('GET', `/users/${user}/subscriptions`, as)).body.subscriptions).toHaveLength(1);
    expect((await api.call('GET', `/users/${encodeURIComponent(email)}/subscriptions`, as)).body.subscriptions).toHaveLength(1);
    failure(await api.call('GET', `/users/${encodeURIComponent(otherEmail)}/subscriptions`, as), 404, 'find_failed');
    failure(await api.call('GET', `/users/${other}/subscriptions`, as), 404, 'find_failed');
    failure(await api.call('POST', `/users/${other}/subscriptions`, { ...as, body: { zip: 2134 } }), 404, 'find_failed');
    failure(await api.call('GET', `/subscriptions/${theirs.id}`, as), 404, 'find_failed');
    failure(await api.call('PUT', `/subscriptions/${theirs.id}`, { ...as, body: { status: 'inactive' } }), 404, 'find_failed');
    const wrongScope = { headers: { authorization: `Bearer ${await issue('saved_deal')}` } };
    failure(await api.call('GET', `/subscriptions/${mine.body.subscription.id}`, wrongScope), 403, 'forbidden');
  });
});
