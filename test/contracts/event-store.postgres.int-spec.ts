import { PostgresEventStore } from '@deals/adapters/event-store/postgres/postgres-event-store.adapter';
import { eventStoreContract } from '@deals/testing/contracts/event-store.contract';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`EventStore contract: postgresql — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  // One database for the run, made here and dropped after.
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => (database = await createTestDatabase('events')));
  afterAll(async () => database?.drop());

  eventStoreContract('postgresql', async () => {
    const store = new PostgresEventStore(database.url);
    return { store, connectAgain: async () => new PostgresEventStore(database.url), cleanup: () => store.close() };
  });
}
