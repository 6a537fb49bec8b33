import { PostgresUsageStore } from '@deals/adapters/usage-store/postgres-usage-store.adapter';
import { usageStoreContract } from '@deals/testing/contracts/usage-store.contract';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`UsageStore contract: postgresql — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => (database = await createTestDatabase('usage')));
  afterAll(async () => database?.drop());

  usageStoreContract('postgresql', async () => {
    const store = new PostgresUsageStore(database.url);
    return {
      store,
      openAnother: async () => new PostgresUsageStore(database.url),
      concurrentProcesses: true,
      cleanup: () => store.close(),
    };
  });
}
