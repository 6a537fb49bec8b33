import { ManualClock } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';

describe('access tokens: POST /users/:user/access_tokens and acting for the user', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let ann: string;
  let bob: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner()).apiKey;
    ann = (await api.call('POST', '/users', { apiKey, body: { email: 'ann@tokens.test', first_name: 'Ann' } })).body.user_id;
    bob = (await api.call('POST', '/users', { apiKey, body: { email: 'bob@tokens.test', first_name: 'Bob' } })).body.user_id;
    await api.call('POST', '/credit_cards', {
      apiKey,
      body: { user_id: ann, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
    });
  });
  afterAll(() => api.close());

  const issue = (userId: string, body: unknown) => api.call('POST', `/users/${userId}/access_tokens`, { apiKey, body });
  const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

  it('issues a token, marked deprecated', async () => {
    const reply = await issue(ann, { expires_in: 3600, scope: 'user,credit_card', access: 'read,write' });
    expect(reply.status).toBe(200);
    expect(reply.headers.deprecation).toBe('true');
    expect(reply.body).toEqual({
      status: 'success',
      access_token: {
        id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        user_id: ann,
        expires_in: 3600,
        scope: 'user,credit_card',
        access: 'read,write',
      },
    });
  });

  it('is marked deprecated in the API description, which needs no credentials', async () => {
    const description = await api.call('GET', '/api-docs.json');
    expect(description.status).toBe(200);
    expect(description.body.paths['/users/{user}/access_tokens'].post.deprecated).toBe(true);
    expect(description.body.paths['/users/{user_id}'].get.deprecated).toBeUndefined();
  });

  it('refuses bad grants, naming each field', async () => {
    const reply = await issue(ann, { expires_in: 0, scope: 'user,wallet', access: 'execute' });
    expect(reply.status).toBe(422);
    expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual(['expires_in', 'scope', 'access']);
    expect((await issue('nobody', { expires_in: 60, scope: 'all', access: 'read' })).status).toBe(404);
  });

  it('acts for its user with or without the :user part, as Bearer or access_token=', async () => {
    const token = (await issue(ann, { expires_in: 3600, scope: 'all', access: 'read,write' })).body.access_token.id;
    expect((await api.call('GET', `/users/${ann}`, as(token))).body.user).toMatchObject({ id: ann, firstname: 'Ann' });
    expect((await api.call('GET', `/users/${ann}?access_token=${token}`)).body.user).toMatchObject({ id: ann });
    const cards = await api.call('GET', '/credit_cards', as(token));
    expect(cards.body.credit_cards).toHaveLength(1);
    const stored = await api.call('POST', '/credit_cards', {
      ...as(token),
      body: { number: '5555555555554444', verification_value: '123', month: 1, year: 2031, zip_code: '60601' },
    });
    expect(stored.status).toBe(200);
    expect((await api.call('PUT', `/users/${ann}`, { ...as(token), body: { last_name: 'Lee' } })).body.user).toMatchObject({
      lastname: 'Lee',
    });
  });

  it("never reaches another user's records", async () => {
    const token = (await issue(ann, { expires_in: 3600, scope: 'all', access: 'read,write' })).body.access_token.id;
    expect((await api.call('GET', `/users/${bob}`, as(token))).status).toBe(404);
    expect((await api.call('PUT', `/users/${bob}`, { ...as(token), body: { first_name: 'Hacked' } })).status).toBe(404);
    expect((await api.call('GET', `/credit_cards?user_id=${bob}`, as(token))).status).toBe(404);
    expect(
      (
        await api.call('POST', '/credit_cards', {
          ...as(token),
          body: { user_id: bob, number: '4242424242424242', verification_value: '123', month: 1, year: 2031, zip_code: '60601' },
        })
      ).status,
    ).toBe(404);
    expect((await api.call('GET', `/users/${bob}`, { apiKey })).body.user.firstname).toBe('Bob');
  });

  it("reads its own user's purchases by id, and never another user's", async () => {
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, quantity: 10 }]);
    const card = async (user: string) =>
      (
        await api.call('POST', '/credit_cards', {
          apiKey,
          body: { user_id: user, number: '4242424242424242', verification_value: '123', month: 12, year: 2031, zip_code: '60601' },
        })
      ).body.credit_card_id;
    const buy = async (user: string) =>
      (
        await api.call('POST', '/purchases', {
          apiKey,
          body: { deal_id: 'chicago-spa-day', quantity: 1, user_id: user, credit_card_id: await card(user), expected_price_per_unit: 4900 },
        })
      ).body.purchase.id;
    const [annPurchase, bobPurchase] = [await buy(ann), await buy(bob)];
    const token = (await issue(ann, { expires_in: 3600, scope: 'all', access: 'read' })).body.access_token.id;
    expect((await api.call('GET', `/purchases/${annPurchase}`, as(token))).body.purchase).toMatchObject({ id: annPurchase, user_id: ann });
    const other = await api.call('GET', `/purchases/${bobPurchase}.json`, as(token));
    expect([other.status, other.body]).toEqual([404, { status: 'error', error_type: 'find_failed', error_msg: 'purchase not found' }]);
    expect((await api.call('GET', `/purchases/${bobPurchase}`, { apiKey })).status).toBe(200);
    // Redeeming by coupon id alone acts for the token's user too: its own coupon, never another user's.
    const couponOf = async (purchaseId: string) =>
      (await api.call('GET', `/purchases/${purchaseId}`, { apiKey })).body.purchase.coupons[0].id;
    const writer = (await issue(ann, { expires_in: 3600, scope: 'all', access: 'read,write' })).body.access_token.id;
    expect((await api.call('PUT', `/coupons/${await couponOf(bobPurchase)}/redeem`, as(writer))).status).toBe(404);
    expect((await api.call('PUT', `/coupons/${await couponOf(annPurchase)}/redeem`, as(writer))).body.coupon).toMatchObject({
      state: 'redeemed',
    });
  });

  it('refuses calls outside its scope or access, partner-only calls, and partner-only fields', async () => {
    const readCards = (await issue(ann, { expires_in: 3600, scope: 'credit_card', access: 'read' })).body.access_token.id;
    const outOfScope = await api.call('GET', `/users/${ann}`, as(readCards));
    expect(outOfScope.status).toBe(403);
    expect(outOfScope.body).toEqual({
      status: 'error',
      error_type: 'forbidden',
      error_msg: "the access token's scope does not include user",
    });
    const noWrite = await api.call('POST', '/credit_cards', { ...as(readCards), body: {} });
    expect(noWrite.body).toEqual({ status: 'error', error_type: 'forbidden', error_msg: 'the access token does not allow write access' });
    const all = (await issue(ann, { expires_in: 3600, scope: 'all', access: 'read,write' })).body.access_token.id;
    const partnerOnly = await api.call('POST', '/users', { ...as(all), body: { email: 'x@tokens.test' } });
    expect(partnerOnly.body).toEqual({
      status: 'error',
      error_type: 'forbidden',
      error_msg: 'this call takes partner credentials, not a user access token',
    });
    expect(
      (await api.call('POST', `/users/${ann}/access_tokens`, { ...as(all), body: { expires_in: 60, scope: 'all', access: 'read' } }))
        .status,
    ).toBe(403);
    const fields = await api.call('PUT', `/users/${ann}`, { ...as(all), body: { token: 'mine', source: 'me' } });
    expect(fields.status).toBe(422);
    expect(fields.body.errors).toEqual([
      { type: 'invalid', resource: 'user', field: 'source', message: 'can be set with partner credentials only' },
      { type: 'invalid', resource: 'user', field: 'token', message: 'can be set with partner credentials only' },
    ]);
  });

  it('stops working when its user is deleted: it can neither act nor restore the user', async () => {
    const gil = (await api.call('POST', '/users', { apiKey, body: { email: 'gil@tokens.test' } })).body.user_id;
    const token = (await issue(gil, { expires_in: 3600, scope: 'all', access: 'read,write' })).body.access_token.id;
    expect((await api.call('GET', `/users/${gil}`, as(token))).status).toBe(200);
    await api.call('PUT', `/users/${gil}`, { apiKey, body: { is_deleted: true } });
    for (const reply of [
      await api.call('GET', `/users/${gil}`, as(token)),
      await api.call('PUT', `/users/${gil}`, { ...as(token), body: { is_deleted: false } }),
    ]) {
      expect([reply.status, reply.body.error_type]).toEqual([401, 'unauthorized']);
    }
    expect((await api.call('GET', `/users/${gil}`, { apiKey })).status).toBe(404);
    // Restored by its partner, the user's token works again until it expires.
    await api.call('PUT', `/users/${gil}`, { apiKey, body: { is_deleted: false } });
    expect((await api.call('GET', `/users/${gil}`, as(token))).status).toBe(200);
  });

  it('stops working when it expires, and an unknown token is refused', async () => {
    const token = (await issue(ann, { expires_in: 60, scope: 'all', access: 'read' })).body.access_token.id;
    expect((await api.call('GET', `/users/${ann}`, as(token))).status).toBe(200);
    clock.advance(61_000);
    const expired = await api.call('GET', `/users/${ann}`, as(token));
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ status: 'error', error_type: 'unauthorized', error_msg: 'access token expired' });
    expect((await api.call('GET', `/users/${ann}`, as('made-up'))).body.error_msg).toBe('unknown access token');
  });
});
