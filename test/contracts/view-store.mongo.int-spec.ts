import { MongoClient } from 'mongodb';
import { randomBytes } from 'node:crypto';
import { MongoViewStore } from '@deals/adapters/view-store/mongo/mongo-view-store.adapter';
import { viewStoreContract } from '@deals/testing/contracts/view-store.contract';
import { ferretdbUnavailable, startFerretDB, type FerretDB } from '../support/ferretdb';

const given = process.env.MONGO_URL;
// Without a server given: FerretDB (MongoDB's wire protocol) on SQLite of its own, built with Go.
const unavailable = given ? null : ferretdbUnavailable();

if (unavailable) {
  describe.skip(`ViewStore contract: mongodb — skipped: MONGO_URL is not set, and ${unavailable}`, () => {
    it('needs a server', () => undefined);
  });
} else {
  let ferretdb: FerretDB | undefined;
  let url = given ?? '';
  beforeAll(async () => {
    if (given) return;
    ferretdb = await startFerretDB();
    url = ferretdb.url;
  });
  afterAll(async () => ferretdb?.stop());

  viewStoreContract(
    given ? 'mongodb' : 'mongodb, on FerretDB over SQLite',
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
