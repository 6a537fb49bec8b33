import { PostgresViewStore } from '@deals/adapters/view-store/postgres/postgres-view-store.adapter';
import { deadLettersContract } from '@deals/testing/contracts/dead-letters.contract';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`dead letters: postgresql — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  // JSONB refuses a NUL character: a document holding one is a dead letter, as is a fold that throws.
  deadLettersContract(
    'postgresql',
    async () => {
      // A database a test: each starts from an empty log.
      const database = await createTestDatabase('dead_letters');
      const views = new PostgresViewStore(database.url);
      return {
        views,
        cleanup: async () => {
          await views.close();
          await database.drop();
        },
      };
    },
    { refusesNul: true },
  );
}
