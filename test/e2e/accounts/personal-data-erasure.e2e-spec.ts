import { EventStore, handleCommand, ManualClock, OPERATOR, PersonalDataEventStore, ViewStore } from '@deals/kernel';
import { userDecider } from '@deals/accounts/domain/user/user.decider';
import { userStream } from '@deals/accounts/domain/user/user.events';
import { PURCHASE_DETAILS, type PurchaseDetails } from '@deals/purchasing';
import { HistorySealing } from '@deals/runtime';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Client } from 'pg';
import { runCli, TestApi } from '../../support/api-harness';
import { chicago, ongoingShipped, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { createTestDatabase, postgresUnavailableSync } from '../../support/postgres';
import { tempDir } from '../../support/temp-dir';

/** What a person asks to be forgotten: every one of these must be gone from the service's storage. */
const PERSON = {
  email: 'Quintessa.Vantablack@example.org',
  first_name: 'Quintessa',
  last_name: 'Vantablack',
  birthday: '1987-03-14',
  postal_code: '60657',
  partner_data: { loyalty: 'Xylophonic-Platinum' },
};
const ADDRESS = {
  name: 'Quintessa Vantablack',
  address_one: '77 Zanzibar Terrace',
  postal_code: '60657',
  city: 'Chicago',
  state: 'il',
  country: 'us',
};
/** The texts searched for, byte for byte, in every file and table (the email lowercased too, as its claim keys it). */
const TRACES = ['Quintessa', 'Vantablack', 'uintessa.vantablack@example', 'Xylophonic', 'Zanzibar', '1987-03-14'];
const CARD = { number: '4242424242424242', verification_value: '123', month: '12', year: '2030', zip_code: '60601' };

/** Every file under `dir` (but the outbox of mail sent before the erasure) holding any trace: file and trace. */
function tracesInFolder(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    if (statSync(path).isDirectory()) return void readdirSync(path).forEach((name) => visit(join(path, name)));
    if (relative(dir, path).startsWith('outbox')) return;
    const bytes = readFileSync(path);
    for (const trace of TRACES)
      if (bytes.includes(trace) || bytes.includes(trace.toLowerCase())) found.push(`${relative(dir, path)}: ${trace}`);
  };
  visit(dir);
  return found;
}

/** A user with everything personal a partner can give, a purchase shipped to them, and a profile change. */
async function personWhoBought(api: TestApi, apiKey: string): Promise<{ userId: string; purchaseId: string }> {
  const bought = await api.call('POST', '/v1/purchases/full.json', {
    apiKey,
    body: {
      deal_id: ongoingShipped.id,
      quantity: 1,
      user: { email: PERSON.email, first_name: 'Quinn' },
      credit_card: CARD,
      shipping_address: ADDRESS,
    },
  });
  expect(bought.status).toBe(200);
  const userId = bought.body.purchase.user_id;
  const { email: _email, ...rest } = PERSON;
  expect((await api.call('PUT', `/users/${userId}`, { apiKey, body: rest })).status).toBe(200);
  expect((await api.call('GET', `/users/${userId}`, { apiKey })).body.user).toMatchObject({
    firstname: 'Quintessa',
    lastname: 'Vantablack',
  });
  return { userId, purchaseId: bought.body.purchase.id };
}

/**
 * Erasure end to end: a user's personal data is in the log only as ciphertext under the user's own
 * key; erasing deletes the key, and then no file of the data folder (nor, on PostgreSQL, any table)
 * holds the person's email, names, birthday, partner data or address, the views rebuilt from the
 * log still show them erased, and the log's seal still verifies.
 */
describe("a user's personal data erased", () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const dir = tempDir('erasure');
  let api: TestApi;
  let apiKey: string;
  let otherKey: string;
  let userId: string;
  let purchaseId: string;

  beforeAll(async () => {
    api = await TestApi.start({ clock, dataDir: dir.path });
    apiKey = (await api.createPartner('Seller')).apiKey;
    otherKey = (await api.createPartner('Another seller')).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([
      { ...ongoingShipped, quantity: 10, max_per_user: undefined },
      { ...spaDay, quantity: 10 },
    ]);
    ({ userId, purchaseId } = await personWhoBought(api, apiKey));
    await api.settle();
    await api.get(HistorySealing).sealNow();
  });
  afterAll(async () => {
    await api?.stop();
    dir.remove();
  });

  it('is asked by the user’s partner alone, answered with its time, and the same time when asked again', async () => {
    expect((await api.call('DELETE', `/users/${userId}/personal_data`, { apiKey: otherKey })).status).toBe(404);
    expect((await api.call('DELETE', '/users/no-such-user/personal_data', { apiKey })).status).toBe(404);
    // Until then the user's own record holds it, and no other file (once the view's write thread has
    // written the record to its file: a little after the commit, later on a loaded machine).
    const before = await eventually(
      async () => tracesInFolder(dir.path),
      (traces) => traces.length > 0,
      30_000,
      50,
    );
    expect(before.length).toBeGreaterThan(0);
    expect(before.filter((trace) => !trace.startsWith('views/user_accounts@'))).toEqual([]);

    const addressId = (await api.get(ViewStore).findById<PurchaseDetails>(PURCHASE_DETAILS, purchaseId))!.shippingAddressId;
    const reuse = { deal_id: ongoingShipped.id, quantity: 1, user_id: userId, shipping_address_id: addressId };
    clock.advance(60_000);
    const erased = await api.call('DELETE', `/users/${userId}/personal_data`, { apiKey });
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({ status: 'success', user_id: userId, erased_at: clock.now().toISOString() });
    // Gone from every file the moment the erasure is answered, while the service runs: no view's
    // write-ahead log keeps an earlier copy of the profile.
    expect(tracesInFolder(dir.path)).toEqual([]);
    clock.advance(60_000);
    expect((await api.call('DELETE', `/users/${userId}/personal_data`, { apiKey })).body.erased_at).toBe(erased.body.erased_at);

    const shown = await api.call('GET', `/users/${userId}`, { apiKey });
    expect([shown.status, shown.body.error_msg]).toEqual([404, expect.stringMatching(/personal data was erased/)]);
    expect((await api.call('PUT', `/users/${userId}`, { apiKey, body: { first_name: 'Again', is_deleted: false } })).status).toBe(404);
    // Its purchase is kept for the books; the address given with it is gone.
    const purchase = await api.call('GET', `/purchases/${purchaseId}`, { apiKey });
    expect([purchase.status, purchase.body.purchase.user_id, purchase.body.purchase.amount]).toEqual([
      200,
      userId,
      ongoingShipped.current_price,
    ]);
    const reused = await api.call('POST', '/v1/purchases/full.json', { apiKey, body: { ...reuse, credit_card: CARD } });
    expect(reused.body.errors).toEqual([expect.objectContaining({ field: 'shipping_address_id', message: 'names no known address' })]);
    // The address is free for a new user.
    expect((await api.call('POST', '/users', { apiKey, body: { email: 'someone.else@example.com' } })).status).toBe(200);
    const again = await api.call('POST', '/users', { apiKey, body: { email: PERSON.email.toUpperCase() } });
    expect([again.status, again.body.user_id === userId]).toEqual([200, false]);
    await api.call('DELETE', `/users/${again.body.user_id}/personal_data`, { apiKey });
  });

  it('leaves no trace in any file of the data folder, after a rebuild of the views too, and the history still verifies', async () => {
    await api.settle();
    await api.get(HistorySealing).sealNow();
    await api.stop();
    expect(tracesInFolder(dir.path)).toEqual([]);
    const rebuilt = await runCli(dir.path, ['projections:rebuild']);
    expect(rebuilt.code).toBe(0);
    expect(tracesInFolder(dir.path)).toEqual([]);
    const verified = await runCli(dir.path, ['audit:verify', '--json']);
    expect([verified.code, JSON.parse(verified.stdout)]).toEqual([0, expect.objectContaining({ verified: true, unsealed: 0 })]);
    api = await TestApi.start({ clock, dataDir: dir.path });
    const shown = await api.call('GET', `/users/${userId}`, { apiKey });
    expect([shown.status, shown.body.error_msg]).toEqual([404, expect.stringMatching(/personal data was erased/)]);
  }, 120_000);

  it('finishes at the next start an erasure a stop interrupted once it was recorded (its key still kept)', async () => {
    const made = await api.call('POST', '/users', { apiKey, body: { email: 'interrupted@example.com', first_name: 'Interrupted' } });
    const id = made.body.user_id;
    // The erasure recorded as its first steps do, and the process stopped before the key's deletion.
    const command = { type: 'EraseUserPersonalData' as const, data: { userId: id, partnerId: null, by: 'operator' as const } };
    await handleCommand(api.get(EventStore), userStream(id), userDecider, command, { now: clock.now(), metadata: OPERATOR });
    await api.settle();
    expect(await api.get(PersonalDataEventStore).isErased(id)).toBe(false);
    await api.stop();
    api = await TestApi.start({ clock, dataDir: dir.path });
    expect(await api.get(PersonalDataEventStore).isErased(id)).toBe(true);
    const events = await api.get(EventStore).readStream(userStream(id));
    expect(JSON.stringify(events)).not.toMatch(/interrupted@|Interrupted/);
  }, 60_000);

  it('is an operator’s to ask too, of any partner’s user (users:erase)', async () => {
    const made = await api.call('POST', '/users', {
      apiKey: otherKey,
      body: { email: 'operator.erases@example.com', first_name: 'Ophelia' },
    });
    await api.stop();
    const erased = await runCli(dir.path, ['users:erase', made.body.user_id, '--json']);
    expect([erased.code, JSON.parse(erased.stdout)]).toEqual([0, { user_id: made.body.user_id, erased_at: expect.any(String) }]);
    const unknown = await runCli(dir.path, ['users:erase', 'no-such-user']);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringMatching(/not found/)]);
    api = await TestApi.start({ clock, dataDir: dir.path });
    expect((await api.call('GET', `/users/${made.body.user_id}`, { apiKey: otherKey })).status).toBe(404);
  }, 60_000);
});

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`a user's personal data erased, on PostgreSQL — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe("a user's personal data erased, on PostgreSQL (DATABASE_URL)", () => {
    const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
    const dir = tempDir('erasure-pg');
    let database: { url: string; drop: () => Promise<void> };
    beforeAll(async () => (database = await createTestDatabase('erasure')));
    afterAll(async () => {
      await database?.drop();
      dir.remove();
    });

    /** Each table and trace where a row's text holds it. */
    async function tracesInDatabase(): Promise<string[]> {
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      try {
        const tables = await admin.query<{ name: string }>(
          "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'",
        );
        const found: string[] = [];
        for (const { name } of tables.rows)
          for (const trace of TRACES) {
            const { rows } = await admin.query(`SELECT 1 FROM ${name} t WHERE t::text ILIKE $1 LIMIT 1`, [`%${trace}%`]);
            if (rows.length) found.push(`${name}: ${trace}`);
          }
        return found;
      } finally {
        await admin.end();
      }
    }

    it('leaves no trace in any table, after a rebuild of the views too, and the history still verifies', async () => {
      const env = { DATABASE_URL: database.url, RUN_PROJECTIONS: 'on' };
      const api = await TestApi.start({ clock, dataDir: dir.path, env });
      let userId: string;
      try {
        const { apiKey } = await api.createPartner('Seller');
        await api.importRegions([chicago]);
        await api.importDeals([{ ...ongoingShipped, quantity: 10, max_per_user: undefined }]);
        ({ userId } = await personWhoBought(api, apiKey));
        await api.settle();
        const before = await tracesInDatabase();
        expect(before.length).toBeGreaterThan(0);
        expect(before.filter((trace) => !trace.startsWith('public.view__user_accounts__'))).toEqual([]);
        const erased = await api.call('DELETE', `/users/${userId}/personal_data`, { apiKey });
        expect(erased.status).toBe(200);
        await api.settle();
        await api.get(HistorySealing).sealNow();
      } finally {
        await api.stop();
      }
      expect(await tracesInDatabase()).toEqual([]);
      expect((await runCli(dir.path, ['projections:rebuild'], env)).code).toBe(0);
      expect(await tracesInDatabase()).toEqual([]);
      expect(tracesInFolder(dir.path)).toEqual([]);
      const verified = await runCli(dir.path, ['audit:verify', '--json'], env);
      expect([verified.code, JSON.parse(verified.stdout)]).toEqual([0, expect.objectContaining({ verified: true })]);
    }, 180_000);
  });
}
