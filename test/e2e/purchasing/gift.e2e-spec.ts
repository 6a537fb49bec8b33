import { CreatedPartner } from '@deals/accounts';
import { ManualClock } from '@deals/kernel';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Client } from 'pg';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { createTestDatabase, postgresUnavailableSync } from '../../support/postgres';
import { tempDir } from '../../support/temp-dir';
import { TEST_CARDS } from '../../support/test-cards';

const CARD = { number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
/** What a gift says that only its recipient's key may open: searched for, byte for byte, in the data folder. */
const NAME = 'Philomena';
const MESSAGE = 'Zygomorphic wishes for your birthday';

/** The gift mails in the data folder's outbox (the embedded mailer's), each as its file's text, by purchase. */
function outboxOf(dataDir: string, purchaseId: string): string[] {
  const outbox = join(dataDir, 'outbox');
  if (!existsSync(outbox)) return [];
  return readdirSync(outbox)
    .filter((name) => name.endsWith('.eml') && name.includes(`gift-${purchaseId}`))
    .map((name) => readFileSync(join(outbox, name), 'utf8'));
}

/** Files of the data folder but its outbox that hold any of `traces`. */
function tracesInFolder(dir: string, traces: string[]): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    if (statSync(path).isDirectory()) return void readdirSync(path).forEach((name) => visit(join(path, name)));
    if (relative(dir, path).startsWith('outbox')) return;
    const bytes = readFileSync(path);
    for (const trace of traces) if (bytes.includes(trace)) found.push(`${relative(dir, path)}: ${trace}`);
  };
  visit(dir);
  return found;
}

/** Each table of the database whose rows' text holds one of `traces`. */
async function tracesInDatabase(url: string, traces: string[]): Promise<string[]> {
  const admin = new Client({ connectionString: url });
  await admin.connect();
  try {
    const tables = await admin.query<{ name: string }>(
      "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'",
    );
    const found: string[] = [];
    for (const { name } of tables.rows)
      for (const trace of traces) {
        const { rows } = await admin.query(`SELECT 1 FROM ${name} t WHERE t::text LIKE $1 LIMIT 1`, [`%${trace}%`]);
        if (rows.length) found.push(`${name}: ${trace}`);
      }
    return found;
  } finally {
    await admin.end();
  }
}

const postgres = postgresUnavailableSync();

/**
 * A gift purchase end to end: its recipient is mailed its coupons and message at the gift's time
 * (a sandbox's gift kept in its outbox, at its time by the test clock), even across a stop of the
 * service; erasing the recipient first leaves the gift unmailed and its name and message nowhere
 * readable, and erasing the payer leaves the gift as it is.
 */
describe('a gift purchase', () => {
  const deals = [{ ...spaDay, quantity: 50, max_per_user: undefined, end_at: '2027-06-18T05:00:00Z' }];

  async function payerOf(api: TestApi, apiKey: string, email: string, headers?: Record<string, string>) {
    const user = (await api.call('POST', '/users', { apiKey, headers, body: { email } })).body.user_id as string;
    const card = (await api.call('POST', '/credit_cards', { apiKey, headers, body: { ...CARD, user_id: user } })).body
      .credit_card_id as string;
    return { user, card };
  }

  const buy = (payer: { user: string; card: string }, gift: Record<string, unknown>) => ({
    deal_id: spaDay.id,
    quantity: 1,
    user_id: payer.user,
    credit_card_id: payer.card,
    expected_price_per_unit: spaDay.current_price,
    gift,
  });

  describe('in a sandbox, under a test clock', () => {
    let api: TestApi;
    let test: string;

    beforeAll(async () => {
      api = await TestApi.start();
      const partner: CreatedPartner = await api.createPartner('Gift sandbox');
      test = partner.sandbox!.apiKey;
      await api.importRegions([chicago]);
      await api.importDeals(deals);
    });
    afterAll(() => api.close());

    it("is kept in the sandbox's outbox when the clock reaches its time, and the feed says it is a gift", async () => {
      const clock = (await api.call('POST', '/v1/test_clocks', { apiKey: test, body: { frozen_time: '2026-06-15T12:00:00Z' } })).body
        .test_clock;
      const headers = { 'deals-test-clock': clock.id };
      const under = (method: string, path: string, body?: unknown) => api.call(method, path, { apiKey: test, headers, body });
      const advance = async (to: string) => {
        expect((await api.call('POST', `/v1/test_clocks/${clock.id}/advance`, { apiKey: test, body: { frozen_time: to } })).status).toBe(
          200,
        );
        const ready = await eventually(
          () => api.call('GET', `/v1/test_clocks/${clock.id}`, { apiKey: test }),
          (reply) => reply.body.test_clock.status === 'ready',
        );
        expect(ready.body.test_clock.status).toBe('ready');
      };
      const kept = async () =>
        ((await api.call('GET', '/v1/sandbox_mail', { apiKey: test })).body.sandbox_mail as Array<{ id: string; subject: string }>).filter(
          (mail) => mail.subject.startsWith('A gift for you'),
        );

      const payer = await payerOf(api, test, 'sandbox.payer@example.org', headers);
      const bought = await under(
        'POST',
        '/purchases',
        buy(payer, { email: 'sandbox.friend@example.org', name: NAME, message: MESSAGE, deliver_at: '2026-06-17T09:00:00Z' }),
      );
      expect(bought.status).toBe(200);
      const { id, gift } = bought.body.purchase;
      expect(gift).toMatchObject({ deliver_at: '2026-06-17T09:00:00.000Z', mail_state: 'scheduled' });

      // A day on, before its time: not mailed.
      await advance('2026-06-16T12:00:00Z');
      expect(await kept()).toEqual([]);
      await advance('2026-06-18T12:00:00Z');
      const [mail] = await eventually(kept, (found) => found.length > 0);
      expect(mail).toMatchObject({ user_id: gift.recipient_user_id, test_clock: clock.id, subject: `A gift for you: ${spaDay.title}` });
      const whole = (await api.call('GET', `/v1/sandbox_mail/${mail.id}`, { apiKey: test })).body.sandbox_mail;
      expect(whole.to).toBe('sandbox.friend@example.org');
      expect(whole.text).toContain(`Hello ${NAME},`);
      expect(whole.text).toContain(MESSAGE);
      expect(whole.text).toContain(`/coupons/${id}-1/print?key=`);
      const shown = await under('GET', `/purchases/${id}`);
      expect(shown.body.purchase.gift).toMatchObject({ mail_state: 'kept', mailed_at: '2026-06-17T09:00:00.000Z' });

      // The feed's purchase.completed carries the gift, as its webhooks do.
      const events = await under('GET', `/v1/events?resource_id=${id}`);
      const completed = events.body.events.find((event: { type: string }) => event.type === 'purchase.completed');
      expect(completed.data).toMatchObject({ id, user_id: payer.user, gift: { recipient_user_id: gift.recipient_user_id } });
    });
  });

  const modes = [
    { mode: 'live, embedded', database: false },
    { mode: `live, on PostgreSQL${postgres ? ` — skipped: ${postgres}` : ''}`, database: true },
  ];
  describe.each(modes)('$mode', ({ database }) => {
    const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
    const dir = tempDir('gift');
    let db: { url: string; drop: () => Promise<void> } | null = null;
    let env: Record<string, string> = {};
    let api: TestApi;
    let partner: CreatedPartner;
    const skip = database && postgres !== null;

    beforeAll(async () => {
      if (skip) return;
      if (database) {
        db = await createTestDatabase('gift');
        env = { DATABASE_URL: db.url, RUN_PROJECTIONS: 'on' };
      }
      api = await TestApi.start({ clock, dataDir: dir.path, env });
      partner = await api.createPartner('Gift giver');
      await api.importRegions([chicago]);
      await api.importDeals(deals);
    });
    afterAll(async () => {
      await api?.stop();
      await db?.drop();
      dir.remove();
    });
    const live = skip ? it.skip : it;

    live('is mailed at its time to the outbox, armed again by a start when a stop lost its job', async () => {
      const payer = await payerOf(api, partner.apiKey, 'payer@example.org');
      const bought = await api.call('POST', '/purchases', {
        apiKey: partner.apiKey,
        body: buy(payer, { email: 'friend@example.org', name: 'Friend', message: 'See you there', deliver_at: '2026-06-16T12:00:00Z' }),
      });
      expect(bought.status).toBe(200);
      const id: string = bought.body.purchase.id;
      expect(outboxOf(dir.path, id)).toEqual([]);
      // Stopped with the gift's job in its memory: the start after its time arms it again from the purchase view.
      await api.stop();
      clock.set('2026-06-16T12:00:01Z');
      api = await TestApi.start({ clock, dataDir: dir.path, env });
      const shown = await eventually(
        () => api.call('GET', `/purchases/${id}`, { apiKey: partner.apiKey }),
        (reply) => reply.body.purchase.gift.mail_state !== 'scheduled',
      );
      expect(shown.body.purchase.gift).toMatchObject({ mail_state: 'sent', mailed_at: '2026-06-16T12:00:01.000Z' });
      const [mail] = outboxOf(dir.path, id);
      expect(mail).toMatch(/^To: friend@example\.org/m);
      expect(mail).toContain('See you there');
    });

    live(
      "is not mailed once its recipient was erased, whose name and message no file or table holds readable; the payer's erasure leaves it as it is",
      async () => {
        clock.set('2026-06-16T13:00:00Z');
        const payer = await payerOf(api, partner.apiKey, 'another.payer@example.org');
        const toErased = await api.call('POST', '/purchases', {
          apiKey: partner.apiKey,
          body: buy(payer, { email: 'erased.friend@example.org', name: NAME, message: MESSAGE, deliver_at: '2026-06-17T09:00:00Z' }),
        });
        expect(toErased.status).toBe(200);
        const { id, gift } = toErased.body.purchase;
        const erased = await api.call('DELETE', `/users/${gift.recipient_user_id}/personal_data`, { apiKey: partner.apiKey });
        expect(erased.status).toBe(200);
        // Its time comes while the service is down: the next start finds it due, and the recipient no one.
        await api.stop();
        clock.set('2026-06-17T09:00:01Z');
        api = await TestApi.start({ clock, dataDir: dir.path, env });
        const shown = await eventually(
          () => api.call('GET', `/purchases/${id}`, { apiKey: partner.apiKey }),
          (reply) => reply.body.purchase.gift.mail_state !== 'scheduled',
        );
        expect(shown.body.purchase.gift).toMatchObject({ mail_state: 'not_sent', recipient_user_id: gift.recipient_user_id });
        expect(outboxOf(dir.path, id)).toEqual([]);
        await api.settle();
        const traces = [NAME, MESSAGE, 'erased.friend@example'];
        expect(tracesInFolder(dir.path, traces)).toEqual([]);
        if (db) expect(await tracesInDatabase(db.url, traces)).toEqual([]);
        // The coupons stay, for the books, under the erased user's id.
        expect(shown.body.purchase.coupons).toHaveLength(1);

        // The payer erased: the purchase and its gift stay, and the recipient is mailed at once.
        const forOther = await api.call('POST', '/purchases', {
          apiKey: partner.apiKey,
          body: buy(payer, { email: 'kept.friend@example.org', name: 'Kept', message: 'Still yours' }),
        });
        expect(forOther.status).toBe(200);
        expect((await api.call('DELETE', `/users/${payer.user}/personal_data`, { apiKey: partner.apiKey })).status).toBe(200);
        const other = forOther.body.purchase;
        const mailed = await eventually(
          () => api.call('GET', `/purchases/${other.id}`, { apiKey: partner.apiKey }),
          (reply) => reply.body.purchase.gift.mail_state !== 'scheduled',
        );
        expect(mailed.body.purchase).toMatchObject({ user_id: payer.user, gift: { mail_state: 'sent' } });
        const coupons = await api.call('GET', `/users/${other.gift.recipient_user_id}/coupons`, { apiKey: partner.apiKey });
        expect(coupons.body.coupons.map((coupon: { id: string }) => coupon.id)).toEqual([`${other.id}-1`]);
        expect(outboxOf(dir.path, other.id)[0]).toContain('Still yours');
      },
    );
  });
});
