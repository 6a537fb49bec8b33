import { StoreCard } from '@deals/accounts';
import { EventStore, ViewStore } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { STORED_CARDS, StoredCard } from '@deals/accounts/projections/stored-cards/stored-cards.projection';
import { TestApi } from '../../support/api-harness';
import { TEST_CARDS } from '../../support/test-cards';

const card = (userId: string, overrides: Record<string, unknown> = {}) => ({
  user_id: userId,
  number: '4242 4242 4242 4242',
  verification_value: '123',
  month: 12,
  year: 2030,
  zip_code: '60601',
  ...overrides,
});

describe('credit cards: POST /credit_cards, GET /credit_cards, PUT /credit_cards/:id/default', () => {
  let api: TestApi;
  let apiKey: string;
  let userId: string;
  beforeAll(async () => {
    api = await TestApi.start();
    apiKey = (await api.createPartner()).apiKey;
    userId = (await api.call('POST', '/users', { apiKey, body: { email: 'card-holder@example.com' } })).body.user_id;
  });
  afterAll(() => api.close());

  const store = (body: unknown) => api.call('POST', '/credit_cards', { apiKey, body });
  const list = (query = '') => api.call('GET', `/credit_cards?user_id=${userId}${query}`, { apiKey });

  it('stores a card and lists it masked, as the only, default card', async () => {
    const stored = await store(card(userId));
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual({ status: 'success', credit_card_id: expect.any(String) });
    expect((await list()).body).toEqual({
      status: 'success',
      credit_cards: [
        {
          id: stored.body.credit_card_id,
          credit_card_id: stored.body.credit_card_id,
          number: 'XXXX-XXXX-XXXX-4242',
          type: 'Visa',
          primary: true,
          deleted: false,
        },
      ],
    });
  });

  it('detects the brand, keeps the first card default and moves the default on request', async () => {
    const second = await store(card(userId, { number: '5555555555554444' }));
    const third = await store(card(userId, { number: '6011111111111117', month: '07', year: '2031' }));
    let cards = (await list()).body.credit_cards;
    expect(cards.map((c: { type: string; primary: boolean }) => [c.type, c.primary])).toEqual([
      ['Visa', true],
      ['MasterCard', false],
      ['Discover', false],
    ]);
    expect((await api.call('PUT', `/credit_cards/${third.body.credit_card_id}/default`, { apiKey })).body).toEqual({ status: 'success' });
    cards = (await list()).body.credit_cards;
    expect(cards.map((c: { primary: boolean }) => c.primary)).toEqual([false, false, true]);
    expect((await list('&count=true')).body).toEqual({ status: 'success', count: 3 });
    expect((await list('&per_page=1&page=2')).body.credit_cards.map((c: { id: string }) => c.id)).toEqual([second.body.credit_card_id]);
  });

  it("reports, for a user's next card, a position no earlier than the card's own (what its answer waits for)", async () => {
    const holder = (await api.call('POST', '/users', { apiKey, body: { email: 'next-card@example.com' } })).body.user_id;
    expect((await store(card(holder))).status).toBe(200);
    // The user has a default card now: choosing one writes nothing, on a stream written before the next card.
    const partnerId = (await api.get(EventStore).readStream(`user-${holder}`))[0].metadata.partnerId!;
    const outcome = await api
      .get(CommandBus)
      .execute(
        new StoreCard(
          holder,
          { number: TEST_CARDS.mastercard, cvv: '123', month: 12, year: 2032, zip: '60601' },
          { partnerId, actor: 'test' },
        ),
      );
    const stored = await api.get(EventStore).readStream(`card-${outcome.cardId}`);
    expect(stored.length).toBeGreaterThan(0);
    expect(outcome.position! >= stored[stored.length - 1].position).toBe(true);
  });

  it('answers the card already stored when the same card is stored again for the user', async () => {
    const first = (await list()).body.credit_cards[0].id;
    const again = await store(card(userId));
    expect(again.body.credit_card_id).toBe(first);
  });

  it('renews the stored card when the same card is stored again with a new expiry or zip code: same id, new details and token', async () => {
    const holder = (await api.call('POST', '/users', { apiKey, body: { email: 'reissued-card@example.com' } })).body.user_id;
    const first = (await store(card(holder))).body.credit_card_id;
    const stored = () => api.get(ViewStore).findById<StoredCard>(STORED_CARDS, first);
    const before = (await stored())!;
    expect(before).toMatchObject({ expMonth: 12, expYear: 2030, zipCode: '60601' });

    const renewed = await store(card(holder, { month: 3, year: 2033, zip_code: '60602' }));
    expect(renewed.body).toEqual({ status: 'success', credit_card_id: first });
    const after = (await stored())!;
    expect(after).toMatchObject({ expMonth: 3, expYear: 2033, zipCode: '60602', last4: '4242', fingerprint: before.fingerprint });
    expect(after.token).not.toBe(before.token);
    const events = await api.get(EventStore).readStream(`card-${first}`);
    expect(events.map((e) => e.type)).toEqual(['CardStored', 'CardRenewed']);
    expect(JSON.stringify(events)).not.toContain('4242'.repeat(4));

    // An earlier expiry (an old form, a stale retry) changes nothing.
    expect((await store(card(holder, { month: 12, year: 2030 }))).body.credit_card_id).toBe(first);
    expect((await stored())!).toMatchObject({ expMonth: 3, expYear: 2033, zipCode: '60602', token: after.token });
    // The same details again change nothing; the user still has one card.
    expect((await store(card(holder, { month: 3, year: 2033, zip_code: '60602' }))).body.credit_card_id).toBe(first);
    expect(await api.get(EventStore).readStream(`card-${first}`)).toHaveLength(2);
    expect((await api.call('GET', `/credit_cards?user_id=${holder}`, { apiKey })).body.credit_cards).toHaveLength(1);
  });

  it('stores one card when the same card is stored for a user by calls at the same moment', async () => {
    const holder = (await api.call('POST', '/users', { apiKey, body: { email: 'together-card@example.com' } })).body.user_id;
    const replies = await Promise.all(Array.from({ length: 6 }, () => store(card(holder))));
    expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(new Set(replies.map((r) => r.body.credit_card_id)).size).toBe(1);
    expect((await api.call('GET', `/credit_cards?user_id=${holder}`, { apiKey })).body.credit_cards).toHaveLength(1);
  });

  it('refuses each invalid field with its own entry (resource, field, type)', async () => {
    const reply = await store({
      user_id: userId,
      number: '4242424242424241',
      verification_value: '12',
      month: 13,
      year: 2030,
      zip_code: 'abc',
    });
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toEqual([
      { type: 'invalid', resource: 'credit_card', field: 'number', message: 'fails the Luhn check' },
      { type: 'invalid', resource: 'credit_card', field: 'verification_value', message: 'must be 3 digits' },
      { type: 'invalid', resource: 'credit_card', field: 'month', message: 'must be a month from 1 to 12' },
      { type: 'invalid', resource: 'credit_card', field: 'zip_code', message: 'must be a 5-digit US zip code or ZIP+4 (12345-6789)' },
    ]);
    const short = await store(card(userId, { number: '42424242' }));
    expect(short.body.errors).toEqual([expect.objectContaining({ field: 'number', message: 'must be 16 digits' })]);
    const expired = await store(card(userId, { month: 1, year: 2020 }));
    expect(expired.body.errors).toEqual([expect.objectContaining({ field: 'year', message: 'has expired' })]);
    const missing = await store({ user_id: userId });
    expect(missing.body.errors.map((e: { field: string; type: string }) => [e.field, e.type])).toEqual([
      ['number', 'missing_field'],
      ['verification_value', 'missing_field'],
      ['month', 'missing_field'],
      ['year', 'missing_field'],
      ['zip_code', 'missing_field'],
    ]);
    expect((await store(card(''))).body.errors).toEqual([
      { type: 'missing_field', resource: 'credit_card', field: 'user_id', message: 'is required' },
    ]);
  });

  it('takes a user_id repeated with one value as that value, and refuses two different ones', async () => {
    const cards = (await list()).body.credit_cards;
    expect((await list(`&user_id=${userId}`)).body.credit_cards).toEqual(cards);
    const two = await list('&user_id=someone-else');
    expect([two.status, two.body.errors]).toEqual([
      422,
      [{ type: 'invalid', resource: 'request', field: 'user_id', message: 'is given more than once, with different values' }],
    ]);
  });

  it('answers 404 for an unknown user or card', async () => {
    expect((await store(card('nobody'))).status).toBe(404);
    expect((await api.call('GET', '/credit_cards?user_id=nobody', { apiKey })).status).toBe(404);
    expect((await api.call('PUT', '/credit_cards/nothing/default', { apiKey })).status).toBe(404);
  });

  it("refuses another user's card as default for this user's token, and a deleted user's cards", async () => {
    const other = (await api.call('POST', '/users', { apiKey, body: { email: 'other-holder@example.com' } })).body.user_id;
    const theirs = (await store(card(other))).body.credit_card_id;
    const token = (
      await api.call('POST', `/users/${userId}/access_tokens`, {
        apiKey,
        body: { expires_in: 60, scope: 'credit_card', access: 'read,write' },
      })
    ).body.access_token.id;
    const reply = await api.call('PUT', `/credit_cards/${theirs}/default`, { headers: { authorization: `Bearer ${token}` } });
    expect(reply.status).toBe(404);
    await api.call('PUT', `/users/${other}`, { apiKey, body: { is_deleted: true } });
    expect((await store(card(other))).status).toBe(404);
  });
});
