import { ViewStore } from '@deals/kernel';
import { TestApi } from '../../support/api-harness';
import { createTestDatabase, postgresUnavailableSync } from '../../support/postgres';

const unavailable = postgresUnavailableSync();
const RULE = 'must be well-formed Unicode text without NUL';

if (unavailable) {
  describe.skip(`text PostgreSQL cannot keep — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  /**
   * PostgreSQL's JSON holds no lone surrogate and no NUL: a user with such a name, had it been taken,
   * would stop the users view for good (every later user unreadable, the service not ready). It is
   * refused at the edge, and the views go on.
   */
  describe('text PostgreSQL cannot keep, on the service on PostgreSQL', () => {
    let database: { url: string; drop: () => Promise<void> };
    let api: TestApi;

    beforeAll(async () => {
      database = await createTestDatabase('texts');
      api = await TestApi.start({ env: { DATABASE_URL: database.url, RUN_PROJECTIONS: 'on' } });
    });
    afterAll(async () => {
      await api?.close();
      await database?.drop();
    });

    it("refuses a lone surrogate or a NUL in a user's fields, and the next user of another partner is readable at once", async () => {
      expect(api.get(ViewStore).backend).toBe('postgresql');
      const first = await api.createPartner('First');
      const other = await api.createPartner('Other');
      for (const body of [
        { email: 'ana@texts.test', first_name: 'Ana\ud800' },
        { email: 'ana@texts.test', last_name: 'Ana\u0000' },
        { email: 'ana@texts.test', partner_data: { note: 'x\udc00' } },
        { email: 'ana\u0000@texts.test' },
      ]) {
        const refused = await api.call('POST', '/users', { apiKey: first.apiKey, body });
        expect([refused.status, refused.body.error_type]).toEqual([422, 'validation_failed']);
        expect(refused.body.errors).toEqual([expect.objectContaining({ type: 'invalid', message: RULE })]);
      }
      const bulk = await api.call('POST', '/v1/bulk_jobs', {
        apiKey: first.apiKey,
        body: { kind: 'saved_deals', items: [{ reference: 'r0', user_id: 'x\ud800y', deal_id: 'd' }] },
      });
      expect([bulk.status, bulk.body.errors?.[0]?.field]).toEqual([422, 'items.0.user_id']);

      const made = await api.call('POST', '/users', { apiKey: other.apiKey, body: { email: 'bo@texts.test', first_name: 'Bo' } });
      expect(made.status).toBe(200);
      const read = await api.call('GET', `/users/${made.body.user_id}`, { apiKey: other.apiKey });
      expect([read.status, read.body.user?.firstname]).toEqual([200, 'Bo']);
      expect((await api.call('GET', '/health/ready')).status).toBe(200);
    });

    it('answers basic credentials holding a NUL as wrong ones, without asking PostgreSQL for them', async () => {
      const partner = await api.createPartner('Basic');
      for (const username of [`${partner.username}\u0000`, '\u0000']) {
        const authorization = `Basic ${Buffer.from(`${username}:${partner.password}`).toString('base64')}`;
        const refused = await api.call('GET', '/api/v3/deals', { headers: { authorization } });
        expect([refused.status, refused.body.error_type]).toEqual([401, 'unauthorized']);
      }
      const authorization = `Basic ${Buffer.from(`${partner.username}:${partner.password}`).toString('base64')}`;
      expect((await api.call('GET', '/api/v3/deals', { headers: { authorization } })).status).toBe(200);
    });
  });
}
