import { PostgresViewStore } from '@deals/adapters/view-store/postgres/postgres-view-store.adapter';
import { viewStoreContract } from '@deals/testing/contracts/view-store.contract';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`ViewStore contract: postgresql — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => (database = await createTestDatabase('views')));
  afterAll(async () => database?.drop());

  viewStoreContract('postgresql', async () => {
    const views = new PostgresViewStore(database.url);
    return { views, openAgain: async () => new PostgresViewStore(database.url), cleanup: () => views.close() };
  });
}
