import { PostgresIdempotencyStore } from '@deals/adapters/idempotency-store/postgres-idempotency-store.adapter';
import { idempotencyStoreContract } from '@deals/testing/contracts/idempotency-store.contract';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`IdempotencyStore contract: postgresql — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => (database = await createTestDatabase('idempotency')));
  afterAll(async () => database?.drop());

  idempotencyStoreContract('postgresql', async () => {
    const store = new PostgresIdempotencyStore(database.url);
    return {
      store,
      openAnother: async () => new PostgresIdempotencyStore(database.url),
      // Its connections closed: its session, and with it its owner lock, end as when its process dies.
      crash: (dying) => dying.close(),
      concurrentProcesses: true,
      cleanup: () => store.close(),
    };
  });
}
