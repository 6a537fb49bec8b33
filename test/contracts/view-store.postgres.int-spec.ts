import { PostgresViewStore } from '@deals/adapters/view-store/postgres/postgres-view-store.adapter';
import { viewStoreContract } from '@deals/testing/contracts/view-store.contract';
import { Client } from 'pg';
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

  viewStoreContract(
    'postgresql',
    async () => {
      const views = new PostgresViewStore(database.url);
      return { views, openAgain: async () => new PostgresViewStore(database.url), cleanup: () => views.close() };
    },
    { commitsAllAtOnce: true, tellsOfCheckpoints: true },
  );

  describe('PostgresViewStore: notices of checkpoints', () => {
    /** The backends of the test database listening for the views' notices. */
    async function listeners(admin: Client): Promise<number[]> {
      const found = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN deals_views'`,
      );
      return found.rows.map((r) => r.pid);
    }

    it('listens through one connection for all its listeners, and opens it again when lost, asking them to read the checkpoints', async () => {
      const views = new PostgresViewStore(database.url);
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      try {
        await views.define('noticed', []);
        const resyncs = [0, 0];
        const heard: string[] = [];
        views.onCheckpoints({ reached: (_c, p) => void heard.push(p), resync: () => void resyncs[0]++ });
        views.onCheckpoints({ reached: () => undefined, resync: () => void resyncs[1]++ });
        const until = async (check: () => boolean | Promise<boolean>, what: string) => {
          for (let i = 0; !(await check()); i++) {
            if (i > 300) throw new Error(`timed out waiting for ${what}`);
            await new Promise((r) => setTimeout(r, 20));
          }
        };
        await until(() => resyncs[0] > 0 && resyncs[1] > 0, 'the first resync');
        const [pid, ...more] = await listeners(admin);
        expect(more).toEqual([]);
        const before = [...resyncs];
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await until(async () => resyncs[0] > before[0] && resyncs[1] > before[1], 'the resync after reconnecting');
        expect((await listeners(admin)).filter((p) => p !== pid)).toHaveLength(1);
        await views.writer('noticed').commit([], '00000000000000000042');
        await until(() => heard.includes('00000000000000000042'), 'the notice on the new connection');
      } finally {
        await admin.end();
        await views.close();
      }
    });
  });
}
