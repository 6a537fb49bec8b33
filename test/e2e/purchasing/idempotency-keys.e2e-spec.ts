import Database from 'better-sqlite3';
import { EventStore, ManualClock } from '@deals/kernel';
import { chargeLockStream } from '@deals/purchasing/domain/charge-lock/charge-lock';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { holdNextCharge } from '../../support/held-charge';

/** Every call that writes takes an `Idempotency-Key`: a repeat is answered, never run again. */
describe('Idempotency-Key on the calls that write', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let userId: string;
  const cards: Record<string, string> = {};
  /** The simulated processor's documented test cards (README). */
  const TEST_CARDS = { approved: '4242424242424242', declined: '4000000000000002' };
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, quantity: 100, max_per_user: undefined }]);
    userId = (await api.call('POST', '/users', { apiKey, body: { email: 'keyed@example.com' } })).body.user_id;
    for (const [name, number] of Object.entries({ visa: TEST_CARDS.approved, decline: TEST_CARDS.declined }))
      cards[name] = (
        await api.call('POST', '/credit_cards', {
          apiKey,
          body: { user_id: userId, number, verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
        })
      ).body.credit_card_id;
  });
  afterAll(() => api.close());

  const order = (overrides: Record<string, unknown> = {}) => ({
    deal_id: 'chicago-spa-day',
    quantity: 1,
    user_id: userId,
    credit_card_id: cards.visa,
    expected_price_per_unit: 4900,
    ...overrides,
  });
  const keyed = (method: string, path: string, key: string, body?: unknown) =>
    api.call(method, path, { apiKey, body, headers: { 'idempotency-key': key } });
  const numLeft = async () => (await api.call('GET', '/deals/chicago-spa-day', { apiKey })).body.deal.num_left;
  /** The charges the simulated processor recorded (approved or not). */
  const charges = () => {
    const vault = new Database(join(api.dataDir, 'payment-vault.sqlite'), { readonly: true });
    try {
      return (vault.prepare('SELECT COUNT(*) AS n FROM charges').get() as { n: number }).n;
    } finally {
      vault.close();
    }
  };
  const purchasesOfUser = async () => (await api.call('GET', `/users/${userId}/purchases`, { apiKey })).body.purchases.length;

  it('answers a repeated stored-card purchase with the first answer, charging once', async () => {
    const [left, charged, bought] = [await numLeft(), charges(), await purchasesOfUser()];
    const key = randomUUID();
    const first = await keyed('POST', '/purchases', key, order());
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await keyed('POST', '/purchases', key, order());
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    // The same request with its JSON keys in another order, and the credentials elsewhere, is the same request.
    const reordered = await api.call('POST', `/purchases?api_key=${apiKey}`, {
      jsonText: JSON.stringify(Object.fromEntries(Object.entries(order()).reverse())),
      headers: { 'idempotency-key': key },
    });
    expect([reordered.status, reordered.headers['idempotent-replayed']]).toEqual([200, 'true']);
    expect([await numLeft(), charges(), await purchasesOfUser()]).toEqual([left - 1, charged + 1, bought + 1]);
  });

  it('runs one of many identical requests sent at once; the others wait for it or are told to retry', async () => {
    const [left, charged] = [await numLeft(), charges()];
    const key = randomUUID();
    const replies = await Promise.all(Array.from({ length: 6 }, () => keyed('POST', '/purchases', key, order({ quantity: 2 }))));
    const ran = replies.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined);
    expect(ran).toHaveLength(1);
    for (const reply of replies) {
      if (reply === ran[0]) continue;
      if (reply.status === 409) {
        expect(reply.body).toMatchObject({ status: 'error', error_type: 'idempotency_key_in_use' });
        expect(reply.headers['retry-after']).toBe('1');
      } else expect([reply.status, reply.body]).toEqual([200, ran[0].body]);
    }
    expect([await numLeft(), charges()]).toEqual([left - 2, charged + 1]);
    // Once answered, every repeat gets the answer.
    expect((await keyed('POST', '/purchases', key, order({ quantity: 2 }))).body).toEqual(ran[0].body);
  });

  it('replays a request answered to every one of six repeats sent at once: a user, a purchase, a kept refusal', async () => {
    const [left, charged] = [await numLeft(), charges()];
    const requests: Array<[string, unknown, number]> = [
      ['/users', { email: 'six-repeats@example.com' }, 200],
      ['/purchases', order(), 200],
      ['/purchases', order({ credit_card_id: cards.decline }), 422],
    ];
    for (const [path, body, status] of requests) {
      const key = randomUUID();
      const first = await keyed('POST', path, key, body);
      expect(first.status).toBe(status);
      const repeats = await Promise.all(Array.from({ length: 6 }, () => keyed('POST', path, key, body)));
      for (const repeat of repeats)
        expect([repeat.status, repeat.headers['idempotent-replayed'], repeat.body]).toEqual([status, 'true', first.body]);
    }
    // The purchase ran once, and the declined card was charged once.
    expect([await numLeft(), charges()]).toEqual([left - 1, charged + 2]);
  });

  it('refuses a key used for another request, and changes nothing', async () => {
    const key = randomUUID();
    const first = await keyed('POST', '/purchases', key, order());
    expect(first.status).toBe(200);
    const [left, charged] = [await numLeft(), charges()];
    const other = await keyed('POST', '/purchases', key, order({ quantity: 3 }));
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ status: 'error', error_type: 'idempotency_key_reused' });
    expect((await keyed('POST', '/purchases/reserve', key, { deal_id: 'chicago-spa-day', num_bought: 1 })).status).toBe(422);
    expect([await numLeft(), charges()]).toEqual([left, charged]);
  });

  it('answers a refusal again as it was: a declined card is not charged twice', async () => {
    const charged = charges();
    const key = randomUUID();
    const first = await keyed('POST', '/purchases', key, order({ credit_card_id: cards.decline }));
    expect([first.status, first.body.error_type]).toEqual([422, 'declined']);
    const again = await keyed('POST', '/purchases', key, order({ credit_card_id: cards.decline }));
    expect([again.status, again.headers['idempotent-replayed'], again.body]).toEqual([422, 'true', first.body]);
    expect(charges()).toBe(charged + 1);
  });

  it('keeps no answer of a conflict: a purchase refused while another charge ran buys when sent again', async () => {
    // Its charge held (made, its answer kept back) until the keyed purchase has its answer.
    const held = holdNextCharge(api);
    const inFlight = api.call('POST', '/purchases', { apiKey, body: order() });
    await held.charging;
    expect((await api.get(EventStore).readStream(chargeLockStream(userId))).at(-1)?.type).toBe('ChargeBegun');
    const key = randomUUID();
    const refused = await keyed('POST', '/purchases', key, order()).finally(held.release);
    expect([refused.status, refused.body.error_type]).toEqual([409, 'already_charging']);
    expect((await inFlight).status).toBe(200);
    const left = await numLeft();
    const retried = await keyed('POST', '/purchases', key, order());
    expect([retried.status, retried.headers['idempotent-replayed']]).toEqual([200, undefined]);
    expect(retried.body.purchase.fulfillment_state).toBe('fulfilled');
    expect(await numLeft()).toBe(left - 1);
    expect((await keyed('POST', '/purchases', key, order())).body).toEqual(retried.body);
  });

  it("answers the key's earlier purchase when the store has lost its claim and answer (a power loss), charging once", async () => {
    const key = randomUUID();
    const first = await keyed('POST', '/purchases', key, order());
    expect(first.status).toBe(200);
    const [left, charged] = [await numLeft(), charges()];
    const db = new Database(join(api.dataDir, 'idempotency.sqlite'));
    try {
      expect(db.prepare('DELETE FROM idempotency_keys').run().changes).toBeGreaterThan(0);
    } finally {
      db.close();
    }
    const again = await keyed('POST', '/purchases', key, order());
    expect([again.status, again.body.purchase.id]).toEqual([200, first.body.purchase.id]);
    expect([await numLeft(), charges()]).toEqual([left, charged]);
  });

  it('makes one full purchase, one user and one card of a repeated full purchase', async () => {
    const key = randomUUID();
    const body = {
      deal_id: 'chicago-spa-day',
      quantity: 1,
      user: { email: 'full-keyed@example.com', password: 'secret1', password_confirmation: 'secret1' },
      credit_card: { number: TEST_CARDS.approved, verification_value: '123', month: '12', year: '2030', zip_code: '60601' },
    };
    const [left, charged] = [await numLeft(), charges()];
    const replies = await Promise.all([0, 1, 2].map(() => keyed('POST', '/v1/purchases/full.json', key, body)));
    const first = replies.find((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined)!;
    expect(first.body.purchase.fulfillment_state).toBe('fulfilled');
    const again = await keyed('POST', '/v1/purchases/full.json', key, body);
    expect([again.status, again.body]).toEqual([200, first.body]);
    expect([await numLeft(), charges()]).toEqual([left - 1, charged + 1]);
  });

  it('reserves once, and claims once, however often each is sent', async () => {
    const left = await numLeft();
    const key = randomUUID();
    const reservation = { deal_id: 'chicago-spa-day', num_bought: 2 };
    const replies = await Promise.all([0, 1, 2].map(() => keyed('POST', '/purchases/reserve', key, reservation)));
    const ids = new Set(replies.filter((r) => r.status === 200).map((r) => r.body.purchase.id));
    expect(ids.size).toBe(1);
    const again = await keyed('POST', '/purchases/reserve', key, reservation);
    expect([again.headers['idempotent-replayed'], again.body.purchase.id]).toEqual(['true', [...ids][0]]);
    expect(await numLeft()).toBe(left - 2);
    const claimKey = randomUUID();
    const claimed = await keyed('PUT', `/purchases/${[...ids][0]}/claim`, claimKey, { user_id: userId });
    expect(claimed.body.purchase.fulfillment_state).toBe('fulfilled');
    const claimedAgain = await keyed('PUT', `/purchases/${[...ids][0]}/claim`, claimKey, { user_id: userId });
    expect([claimedAgain.headers['idempotent-replayed'], claimedAgain.body]).toEqual(['true', claimed.body]);
  });

  it("keeps every write's answer, not only a purchase's; a key is the partner's own", async () => {
    const key = randomUUID();
    const made = await keyed('POST', '/users', key, { email: 'once@example.com' });
    expect(made.status).toBe(200);
    const again = await keyed('POST', '/users', key, { email: 'once@example.com' });
    expect([again.headers['idempotent-replayed'], again.body]).toEqual(['true', made.body]);
    // Another partner's key of the same text is another key.
    const otherKey = (await api.createPartner('Other')).apiKey;
    const other = await api.call('POST', '/users', {
      apiKey: otherKey,
      body: { email: 'once@example.com' },
      headers: { 'idempotency-key': key },
    });
    expect([other.status, other.headers['idempotent-replayed']]).toEqual([200, undefined]);
    expect(other.body.user_id).not.toBe(made.body.user_id);
  });

  it('refuses a key that is not 1 to 255 printable characters, before running anything', async () => {
    const left = await numLeft();
    for (const key of ['x'.repeat(256), 'tab\there', 'ünïcödé']) {
      const reply = await api.call('POST', '/purchases', { apiKey, body: order(), headers: { 'idempotency-key': key } });
      expect([reply.status, reply.body.error_type]).toEqual([400, 'bad_request']);
    }
    // Given twice (Node would join the two into one text that looks like a key).
    const twice = await api.call('POST', '/purchases', { apiKey, body: order(), headers: { 'idempotency-key': ['one', 'two'] as never } });
    expect([twice.status, twice.body.error_type]).toEqual([400, 'bad_request']);
    expect(await numLeft()).toBe(left);
  });

  it('keeps the answers sealed: no coupon code or body text in the store', async () => {
    const key = randomUUID();
    const bought = await keyed('POST', '/purchases', key, order());
    const code = bought.body.purchase.coupons[0].redemption_code as string;
    const db = new Database(join(api.dataDir, 'idempotency.sqlite'), { readonly: true });
    try {
      const rows = db.prepare('SELECT key_id, body FROM idempotency_keys WHERE body IS NOT NULL').all() as Array<{
        key_id: string;
        body: Buffer;
      }>;
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.key_id).not.toContain(key);
        expect(row.body.toString('latin1')).not.toContain(code);
        expect(row.body.toString('latin1')).not.toContain('"status"');
      }
    } finally {
      db.close();
    }
  });
});
