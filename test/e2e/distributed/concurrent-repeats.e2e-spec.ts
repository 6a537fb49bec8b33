import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { createTestDatabase, postgresUnavailableSync } from '../../support/postgres';
import { hasRedisServer, startRedisServer } from '../../support/redis-server';
import { tempDir } from '../../support/temp-dir';
import { WorkerProcess } from '../../support/worker-process';

const why = postgresUnavailableSync() ?? (hasRedisServer() ? null : 'no redis-server binary on PATH');
const DAY_MS = 86_400_000;
/** Rounds of each race: one round lost it 3 times in 4 before repeats reported their stream's last event. */
const ROUNDS = 5;

if (why) {
  describe.skip(`one request sent to two replicas at once — skipped: ${why}`, () => {
    it('needs PostgreSQL and Redis', () => undefined);
  });
} else {
  /**
   * One request sent to both API replicas at the same moment (a client's retry, a load balancer's
   * duplicate): one writes, the other finds nothing to write, and must still answer what was written,
   * from views the worker fills a little later.
   */
  describe('one request sent to two replicas at once: both answer what was written', () => {
    const dir = tempDir('concurrent-repeats');
    let database: { url: string; drop: () => Promise<void> };
    let redis: { url: string; stop(): Promise<void> };
    let env: Record<string, string>;
    let worker: WorkerProcess;
    let replicas: ApiProcess[] = [];
    let key: string;
    let basic: string;

    beforeAll(async () => {
      database = await createTestDatabase('repeats');
      redis = await startRedisServer();
      env = { DATABASE_URL: database.url, REDIS_URL: redis.url, REDIS_PREFIX: 'repeats' };
      const partner = JSON.parse((await runCli(dir.path, ['partners:create', '--name', 'Replicated', '--json'], env)).stdout);
      key = `api_key=${partner.api_key}`;
      basic = Buffer.from(`${partner.username}:${partner.password}`).toString('base64');
      writeFileSync(join(dir.path, 'regions.json'), JSON.stringify([chicago]));
      const [start, end] = [new Date(Date.now() - DAY_MS).toISOString(), new Date(Date.now() + 7 * DAY_MS).toISOString()];
      writeFileSync(
        join(dir.path, 'deals.json'),
        JSON.stringify([
          { ...spaDay, id: 'resold-spa', quantity: 1000, max_per_user: undefined, start_at: start, end_at: end },
          { ...cardLinked, id: 'linked-coffee', start_at: start, end_at: end },
        ]),
      );
      expect((await runCli(dir.path, ['regions:import', join(dir.path, 'regions.json')], env)).code).toBe(0);
      expect((await runCli(dir.path, ['deals:import', join(dir.path, 'deals.json')], env)).code).toBe(0);
      worker = await WorkerProcess.start(dir.path, env);
      replicas = await Promise.all([freePort(), freePort()].map(async (port) => ApiProcess.start(dir.path, await port, env)));
      for (const api of replicas)
        for (let i = 0; (await api.call('GET', `/deals/resold-spa?${key}`)).status !== 200; i++) {
          if (i > 200) throw new Error('the worker did not project the deals');
          await new Promise((r) => setTimeout(r, 100));
        }
    }, 120_000);

    afterAll(async () => {
      await Promise.all(replicas.map((api) => api.stop()));
      await worker?.stop();
      await redis?.stop();
      await database?.drop();
      dir.remove();
    }, 60_000);

    const both = <T>(n: number, run: (api: ApiProcess, i: number) => Promise<T>) =>
      Promise.all(Array.from({ length: n }, (_, i) => run(replicas[i % 2], i)));
    const newUser = async (i: string) =>
      (await replicas[0].call('POST', `/users?${key}`, { email: `${i}@repeats.test` })).body.user_id as string;

    it('a reseller sale: both answer it with its coupons', async () => {
      const bad: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const body = {
          deal_id: 'resold-spa',
          quantity: 2,
          transaction_reference: `rv-tx-${round}`,
          transaction_date: new Date().toISOString(),
          transaction_amount: 4900,
          first_name: 'Ray',
          last_name: 'Sell',
        };
        const replies = await both(6, (api) =>
          api.callWithHeaders('POST', '/api/v3/resellers/purchases', body, { authorization: `Basic ${basic}` }),
        );
        for (const r of replies) if (r.status !== 200 || r.body.coupons?.length !== 2) bad.push([round, r.status, r.body]);
      }
      expect(bad).toEqual([]);
    }, 120_000);

    it('POST /saved_deals twice at once through both replicas: both answer the saved deal', async () => {
      const bad: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const user = await newUser(`saver${round}`);
        const replies = await both(2, (api) => api.call('POST', `/saved_deals?${key}`, { user_id: user, deal_id: 'resold-spa' }));
        for (const r of replies) if (r.status !== 200) bad.push([round, r.status, r.body]);
      }
      expect(bad).toEqual([]);
    }, 120_000);

    it('POST /users/:id/subscriptions twice at once through both replicas: both answer the subscription', async () => {
      const bad: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const user = await newUser(`sub${round}`);
        const replies = await both(2, (api) => api.call('POST', `/users/${user}/subscriptions?${key}`, { zip: '60601' }));
        for (const r of replies) if (r.status !== 200) bad.push([round, r.status, r.body]);
      }
      expect(bad).toEqual([]);
    }, 120_000);

    it('update_by_email for a new email, same body, twice at once through both replicas: both answer the user', async () => {
      const bad: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const email = encodeURIComponent(`byemail${round}@repeats.test`);
        const replies = await both(2, (api) => api.call('PUT', `/api/v1/users/${email}/update_by_email?${key}`, { first_name: 'Same' }));
        for (const r of replies) if (r.status !== 200) bad.push([round, r.status, r.body]);
      }
      expect(bad).toEqual([]);
    }, 120_000);

    it('the same card stored twice at once through both replicas, each answering replica lists it at once', async () => {
      const bad: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const user = await newUser(`carder${round}`);
        const card = { user_id: user, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
        const replies = await both(2, async (api) => {
          const stored = await api.call('POST', `/credit_cards?${key}`, card);
          if (stored.status !== 200) return stored;
          // Read your writes on the replica that answered: its user's cards list the card.
          const listed = await api.call('GET', `/credit_cards?user_id=${user}&${key}`);
          const ids = (listed.body.credit_cards ?? []).map((c: { id: string }) => c.id);
          return ids.includes(stored.body.credit_card_id) ? listed : { status: 'missing', body: listed.body };
        });
        for (const r of replies) if (r.status !== 200) bad.push([round, r.status, r.body]);
      }
      expect(bad).toEqual([]);
    }, 120_000);
    it('PUT /purchases/:id/release twice at once through both replicas: both answer it released', async () => {
      const bad: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const id = (await replicas[0].call('POST', `/purchases/reserve?${key}`, { deal_id: 'resold-spa', num_bought: 1 })).body.purchase.id;
        const replies = await both(2, (api) => api.call('PUT', `/purchases/${id}/release?${key}`, {}));
        for (const r of replies)
          if (r.status !== 200 || r.body.purchase.fulfillment_state !== 'released')
            bad.push([round, r.status, r.body.purchase?.fulfillment_state]);
      }
      expect(bad).toEqual([]);
    }, 120_000);
    it('POST /card_links twice at once through both replicas: both answer the link', async () => {
      const bad: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const user = await newUser(`linker${round}`);
        const replies = await both(2, (api) => api.call('POST', `/card_links?${key}`, { user_id: user, deal_id: 'linked-coffee' }));
        for (const r of replies) if (r.status !== 200 || !r.body.card_link) bad.push([round, r.status, r.body]);
      }
      expect(bad).toEqual([]);
    }, 120_000);
  });
}
