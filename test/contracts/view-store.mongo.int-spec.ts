import { MongoClient } from 'mongodb';
import { randomBytes } from 'node:crypto';
import { MongoViewStore } from '@deals/adapters/view-store/mongo/mongo-view-store.adapter';
import { viewStoreContract } from '@deals/testing/contracts/view-store.contract';

const url = process.env.MONGO_URL;

if (!url) {
  describe.skip('ViewStore contract: mongodb — skipped: MONGO_URL is not set (the URL of a MongoDB server to run it against)', () => {
    it('needs a server', () => undefined);
  });
} else {
  viewStoreContract(
    'mongodb',
    async () => {
      // A database per test: nothing is shared with other data on the server, and all is dropped after.
      const dbName = `contract_${Date.now()}_${randomBytes(3).toString('hex')}`;
      const views = new MongoViewStore(url, dbName);
      await views.ping();
      return {
        views,
        openAgain: async () => new MongoViewStore(url, dbName),
        cleanup: async () => {
          await views.close();
          const client = new MongoClient(url);
          try {
            await client.db(dbName).dropDatabase();
          } finally {
            await client.close();
          }
        },
      };
    },
    { writesAhead: true },
  );
}
