import { ViewDocument } from '@deals/kernel';
import { PostgresViewStore } from '@deals/adapters/view-store/postgres/postgres-view-store.adapter';
import { viewStoreContract } from '@deals/testing/contracts/view-store.contract';
import { Client } from 'pg';
import { eventually } from '../support/eventually';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();
/** How long a wait for what the store does may take before it is taken as hung. */
const HUNG_MS = 60_000;

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
    { commitsAllAtOnce: true, tellsOfCheckpoints: true, writesAhead: true },
  );

  describe('PostgresViewStore: notices of checkpoints', () => {
    /** The backends of the test database listening for the views' notices. */
    async function listeners(admin: Client): Promise<number[]> {
      const found = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN deals_views'`,
      );
      return found.rows.map((r) => r.pid);
    }

    // Past the waits' own ceiling, so that a hung wait fails on what it waited for.
    jest.setTimeout(2 * HUNG_MS);

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
          if (
            !(await eventually(
              async () => check(),
              (done) => done,
              HUNG_MS,
              10,
            ))
          )
            throw new Error(`hung waiting for ${what}`);
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

  describe('PostgresViewStore: leases dividing the views among keepers', () => {
    const VIEWS = Array.from({ length: 11 }, (_, i) => `view_${String(i).padStart(2, '0')}`);
    let views: PostgresViewStore;
    beforeEach(async () => {
      views = new PostgresViewStore(database.url);
      await views.define('leased', []);
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      await admin.query('TRUNCATE view_keepers, view_leases');
      await admin.end();
    });
    afterEach(() => views.close());

    /** Who holds each view, from the keepers' own answers (each view at most once). */
    const holders = (answers: Record<string, string[]>) => {
      const byView = new Map<string, string>();
      for (const [keeper, held] of Object.entries(answers))
        for (const view of held) {
          expect(byView.get(view)).toBeUndefined();
          byView.set(view, keeper);
        }
      return byView;
    };

    it('gives a lone keeper every view; a second and a third take their fair parts as the first gives them up', async () => {
      const leases = views.leases();
      expect(await leases.balance('a', VIEWS, 3000)).toEqual(VIEWS);
      // The second finds none free until the first balances again and gives up what is above its part (6 of 11).
      expect(await leases.balance('b', VIEWS, 3000)).toEqual([]);
      const a = await leases.balance('a', VIEWS, 3000);
      expect(a).toHaveLength(6);
      const b = await leases.balance('b', VIEWS, 3000);
      expect(b).toHaveLength(5);
      expect(holders({ a, b }).size).toBe(11);
      // A third: parts of at most 4.
      expect(await leases.balance('c', VIEWS, 3000)).toEqual([]);
      const answers = { a: await leases.balance('a', VIEWS, 3000), b: await leases.balance('b', VIEWS, 3000) };
      const c = await leases.balance('c', VIEWS, 3000);
      expect([answers.a.length, answers.b.length, c.length]).toEqual([4, 4, 3]);
      expect(holders({ ...answers, c }).size).toBe(11);
    });

    it("hands a keeper's views to the others when it leaves, and when its leases lapse unrenewed", async () => {
      const leases = views.leases();
      await leases.balance('a', VIEWS, 3000);
      await leases.balance('b', VIEWS, 1000);
      await leases.balance('a', VIEWS, 3000);
      expect(await leases.balance('b', VIEWS, 1000)).toHaveLength(5);
      // b stops renewing (frozen, killed): within its second a takes nothing of it; once its leases
      // have lapsed by the server's clock, everything.
      expect(await leases.balance('a', VIEWS, 3000)).toHaveLength(6);
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      try {
        const liveOfB = async () =>
          (
            await admin.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM view_leases WHERE keeper = 'b' AND expires_at > clock_timestamp()`,
            )
          ).rows[0].n;
        expect(await eventually(liveOfB, (n) => n === 0, HUNG_MS, 10)).toBe(0);
      } finally {
        await admin.end();
      }
      expect(await leases.balance('a', VIEWS, 3000)).toEqual(VIEWS);
      // b comes back: it holds none of what was taken, and takes its part once a gives it up.
      expect(await leases.balance('b', VIEWS, 3000)).toEqual([]);
      await leases.balance('a', VIEWS, 3000);
      expect(await leases.balance('b', VIEWS, 3000)).toHaveLength(5);
      // a leaves (stopping): b takes everything at its next balance.
      await leases.leave('a');
      expect(await leases.balance('b', VIEWS, 3000)).toEqual(VIEWS);
    });

    it('gives each view to one keeper when four balance at once, through stores of their own', async () => {
      const stores = [views, ...Array.from({ length: 3 }, () => new PostgresViewStore(database.url))];
      try {
        const keepers = ['a', 'b', 'c', 'd'];
        let answers: Record<string, string[]> = {};
        for (let round = 0; round < 4; round++) {
          const held = await Promise.all(keepers.map((k, i) => stores[i].leases().balance(k, VIEWS, 3000)));
          answers = Object.fromEntries(keepers.map((k, i) => [k, held[i]]));
          holders(answers);
        }
        expect(holders(answers).size).toBe(11);
        expect(Object.values(answers).every((held) => held.length <= 3)).toBe(true);
      } finally {
        for (const store of stores.slice(1)) await store.close();
      }
    });
  });

  describe('PostgresViewStore: look-ups by id', () => {
    it('reads the look-ups asked in one turn in one statement, across collections, each answered with its own document or null', async () => {
      const views = new PostgresViewStore(database.url);
      try {
        await views.define('lookups_a', []);
        await views.define('lookups_b', []);
        const at = (n: number) => String(n).padStart(20, '0');
        await views.writer('lookups_a').commit(
          [
            { _id: 'x', _pos: at(1), n: 1 },
            { _id: 'y', _pos: at(1), n: 2 },
          ],
          at(1),
        );
        await views.writer('lookups_b').commit([{ _id: 'x', _pos: at(1), n: 3 }], at(1));
        const pool = (views as unknown as { pool: { query: (...args: unknown[]) => unknown } }).pool;
        const query = jest.spyOn(pool, 'query');
        const found = await Promise.all([
          views.findById<{ _id: string; _pos: string; n: number }>('lookups_a', 'x'),
          views.findById<{ _id: string; _pos: string; n: number }>('lookups_b', 'x'),
          views.findById('lookups_b', 'y'),
          views.findById<{ _id: string; _pos: string; n: number }>('lookups_a', 'y'),
          views.findById<{ _id: string; _pos: string; n: number }>('lookups_a', 'x'),
        ]);
        expect(found.map((doc) => (doc as { n?: number } | null)?.n ?? null)).toEqual([1, 3, null, 2, 1]);
        expect(query).toHaveBeenCalledTimes(1);
        // A look-up of a later turn reads what was committed meanwhile.
        await views.writer('lookups_b').commit([{ _id: 'y', _pos: at(2), n: 4 }], at(2));
        expect(((await views.findById('lookups_b', 'y')) as { n: number } | null)?.n).toBe(4);
        await expect(views.findById('lookups_none', 'x')).rejects.toThrow();
      } finally {
        await views.close();
      }
    });

    it("indexes only the fields the collection's indexes name, answers equalities on them through that index, and drops an older table's whole-document index", async () => {
      const views = new PostgresViewStore(database.url);
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      try {
        await views.define('keyed_first', []); // the store's own tables exist
        // A table as an older version made it: its index holds the whole document.
        await admin.query(`INSERT INTO view_generations (collection, generation) VALUES ('keyed', 'g1') ON CONFLICT DO NOTHING`);
        await admin.query(`CREATE TABLE "view__keyed__g1" (id text PRIMARY KEY, pos text NOT NULL, doc jsonb NOT NULL)`);
        await admin.query(`CREATE INDEX "view__keyed__g1__doc" ON "view__keyed__g1" USING gin (doc jsonb_path_ops)`);
        await views.define('keyed', [{ keys: { userId: 1 } }, { keys: { state: 1, createdAt: -1 } }, { keys: { 'deal.id': 1 } }]);
        const indexes = await admin.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE tablename = 'view__keyed__g1'`);
        const gin = indexes.rows.map((r) => r.indexdef).filter((d) => d.includes('gin'));
        expect(gin).toHaveLength(1);
        expect(gin[0]).toContain("deals_view_keys(doc, '{createdAt,state,userId}'::text[])");
        const at = (n: number) => String(n).padStart(20, '0');
        const docs = Array.from({ length: 300 }, (_, n) => ({
          _id: `d${n}`,
          _pos: at(1),
          userId: `u${n % 30}`,
          state: n % 2 ? 'open' : ['open', 'closed'],
          deal: { id: `x${n % 3}` },
          note: `n${n}`,
        }));
        await views.writer('keyed').commit(docs, at(1));
        expect((await views.find('keyed', { userId: 'u7' }, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(
          docs
            .filter((d) => d.userId === 'u7')
            .map((d) => d._id)
            .sort(),
        );
        expect(await views.count('keyed', { state: 'closed', note: 'n4' })).toBe(1);
        expect(await views.count('keyed', { note: { $in: ['n1', 'n2'] }, 'deal.id': 'x1' })).toBe(1);
        await admin.query('SET enable_seqscan = off');
        const plan = await admin.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT doc FROM "view__keyed__g1" WHERE deals_view_keys(doc, '{createdAt,state,userId}'::text[]) @> '{"userId": "u7"}'::jsonb`,
        );
        expect(plan.rows.map((r) => r['QUERY PLAN']).join(' ')).toMatch(/Bitmap Index Scan on "?vk_/);
      } finally {
        await admin.end();
        await views.close();
      }
    });
  });

  describe('PostgresViewStore: a rebuilt generation', () => {
    it('is filled without its index, indexed once as it completes (before it serves), and its commits tell no listener', async () => {
      const views = new PostgresViewStore(database.url);
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      const heard: string[] = [];
      await admin.query('LISTEN deals_views');
      admin.on('notification', ({ payload }) => heard.push(payload ?? ''));
      try {
        await views.define('rebuilt', [{ keys: { userId: 1 } }]);
        const at = (n: number) => String(n).padStart(20, '0');
        const target = await views.beginRebuild('rebuilt');
        const name = `view__rebuilt__${target.generation}`;
        const gin = async () =>
          (await admin.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE tablename = $1`, [name])).rows.filter((r) =>
            r.indexdef.includes('gin'),
          ).length;
        const doc = (id: string, n: number) => ({ _id: id, _pos: at(n), userId: `u${n}` }) as ViewDocument;
        await views.commitAll([{ writer: target, documents: [doc('a', 1)], checkpoint: at(1) }]);
        await target.commit([doc('b', 2)], at(2));
        expect(await gin()).toBe(0);
        await target.complete!();
        expect(await gin()).toBe(1);
        await target.activate();
        expect(await gin()).toBe(1);
        expect((await views.find('rebuilt', { userId: 'u2' })).map((d) => d._id)).toEqual(['b']);
        // A live commit is told; the rebuild's two were not.
        await views.writer('rebuilt').commit([doc('c', 3)], at(3));
        await eventually(
          async () => heard.length,
          (n) => n > 0,
        );
        expect(heard).toHaveLength(1);
        expect(heard[0]).toContain(`rebuilt@${target.generation}`);
      } finally {
        await admin.end();
        await views.close();
      }
    });
  });

  describe('PostgresViewStore: writing ahead of the fold', () => {
    it('writes nothing into a generation that another process has replaced since this one looked, and says so', async () => {
      const here = new PostgresViewStore(database.url);
      const other = new PostgresViewStore(database.url);
      try {
        await here.define('ahead_rebuilt', []);
        await other.define('ahead_rebuilt', []);
        // This process has not looked since: its poll stopped (it runs every half second).
        clearInterval((here as unknown as { poller: NodeJS.Timeout }).poller);
        const target = await other.beginRebuild('ahead_rebuilt');
        await target.activate();
        const doc = { _id: 'p1', _pos: '00000000000000000007', title: 'made by a request' };
        expect(await here.writeAhead([{ collection: 'ahead_rebuilt', documents: [doc] }])).toBe(false);
        expect(await other.findById('ahead_rebuilt', 'p1')).toBeNull();
        // Having looked again, it writes into the generation every reader uses.
        await eventually(
          () => here.writeAhead([{ collection: 'ahead_rebuilt', documents: [doc] }]),
          (written) => written,
          HUNG_MS,
          10,
        );
        expect(await other.findById('ahead_rebuilt', 'p1')).toEqual(doc);
      } finally {
        await Promise.all([here.close(), other.close()]);
      }
    });
  });
}
