import { EventStore, ManualClock, ViewStore, writesViews } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { createTestDatabase, postgresUnavailableSync } from '../../support/postgres';
import { tempDir } from '../../support/temp-dir';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`the service on a PostgreSQL event log — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('the service on PostgreSQL, event log and views (DATABASE_URL), in one process', () => {
    let database: { url: string; drop: () => Promise<void> };
    const dir = tempDir('pg-events');
    beforeAll(async () => (database = await createTestDatabase('service')));
    afterAll(async () => {
      await database?.drop();
      dir.remove();
    });

    it('buys, links and reads back across a restart', async () => {
      const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
      let api = await TestApi.start({
        clock,
        dataDir: dir.path,
        env: { DATABASE_URL: database.url, RUN_PROJECTIONS: 'on', SLOW_CARD_MS: '0' },
      });
      expect(api.get(EventStore).backend).toBe('postgresql');
      expect(api.get(ViewStore).backend).toBe('postgresql');
      // The log and the views in one database: a purchase's documents go in its sale's transaction.
      expect(writesViews(api.get(EventStore))).toBe(true);
      const { apiKey } = await api.createPartner();
      await api.importRegions([chicago]);
      // A per-user limit above three: three purchases of one user may all be sold, so the only refusal is the charge lock's.
      await api.importDeals([{ ...spaDay, quantity: 5, max_per_user: 5 }, cardLinked]);
      const user = (await api.call('POST', '/users', { apiKey, body: { email: 'pg@example.com' } })).body.user_id;
      const card = (
        await api.call('POST', '/credit_cards', {
          apiKey,
          body: { user_id: user, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
        })
      ).body.credit_card_id;
      const bought = await Promise.all(
        Array.from({ length: 3 }, () =>
          api.call('POST', '/purchases', {
            apiKey,
            body: { deal_id: spaDay.id, quantity: 1, user_id: user, credit_card_id: card, expected_price_per_unit: spaDay.current_price },
          }),
        ),
      );
      // One charge at a time per user: the others are 409 already_charging.
      expect(bought.filter((r) => r.status !== 200 && r.status !== 409).map((r) => [r.status, r.body])).toEqual([]);
      expect(bought.some((r) => r.status === 200)).toBe(true);
      const link = await api.call('POST', '/card_links', { apiKey, body: { user_id: user, deal_id: cardLinked.id } });
      expect(link.status).toBe(200);
      await api.stop();

      api = await TestApi.start({ clock, dataDir: dir.path, env: { DATABASE_URL: database.url, RUN_PROJECTIONS: 'on' } });
      try {
        const sold = bought.filter((r) => r.status === 200).length;
        expect((await api.call('GET', `/deals/${spaDay.id}`, { apiKey })).body.deal.num_left).toBe(5 - sold);
        expect((await api.call('GET', `/users/${user}/card_links`, { apiKey })).body.card_links).toEqual([link.body.card_link]);
      } finally {
        await api.stop();
      }
    });

    it('reads a reservation released from the instant its hold lapsed, from the PostgreSQL views, and claims it on fresh units', async () => {
      const clock = new ManualClock(new Date('2026-06-16T12:00:00Z'));
      const api = await TestApi.start({ clock, dataDir: dir.path, env: { DATABASE_URL: database.url, RUN_PROJECTIONS: 'on' } });
      try {
        const { apiKey } = await api.createPartner('Lapsing');
        await api.importRegions([chicago]);
        await api.importDeals([{ ...spaDay, id: 'pg-lapsing', quantity: 2, max_per_user: undefined }]);
        const reserved = (await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: 'pg-lapsing', num_bought: 2 } })).body
          .purchase;
        expect(reserved.fulfillment_state).toBe('reserved');
        clock.advance(5 * 60_000);
        const shown = (await api.call('GET', `/purchases/${reserved.id}`, { apiKey })).body.purchase;
        expect([shown.payment_state, shown.fulfillment_state]).toEqual(['pending', 'released']);
        const user = (await api.call('POST', '/users', { apiKey, body: { email: 'late-pg@example.com' } })).body.user_id;
        const claimed = await api.call('PUT', `/purchases/${reserved.id}/claim`, { apiKey, body: { user_id: user } });
        expect([claimed.status, claimed.body.purchase.fulfillment_state]).toEqual([200, 'fulfilled']);
      } finally {
        await api.stop();
      }
    });
  });
}
