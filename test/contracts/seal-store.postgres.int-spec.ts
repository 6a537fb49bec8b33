import { PostgresSealStore } from '@deals/adapters/seal-store/postgres-seal-store.adapter';
import { sealStoreContract } from '@deals/testing/contracts/seal-store.contract';
import { Client } from 'pg';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

if (unavailable) {
  describe.skip(`SealStore contract: postgresql — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => (database = await createTestDatabase('seals')));
  afterAll(async () => database?.drop());

  sealStoreContract('postgresql', async () => {
    const store = new PostgresSealStore(database.url);
    return {
      store,
      openAnother: async () => new PostgresSealStore(database.url),
      cleanup: async () => {
        await store.close();
        const admin = new Client({ connectionString: database.url });
        await admin.connect();
        await admin.query('DROP TABLE IF EXISTS event_seals, audit_checkpoints');
        await admin.end();
      },
    };
  });
}
