import { ALL_PROJECTIONS } from '@deals/runtime';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import { request } from 'undici';
import { runCli } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { hasRedisServer } from '../../support/redis-server';
import { ReplicatedService, startReplicatedService } from '../../support/replicated-service';
import { MovableClock } from '../../support/movable-clock';
import { auditedInventory } from '../../support/inventory-audit';
import { eventually } from '../../support/eventually';
import { processesPostgresUnavailableSync } from '../../support/private-postgres';
import { tempDir } from '../../support/temp-dir';
import { buyerWithCard, DECLINED_TEST_CARD, TEST_CARDS } from '../../support/test-cards';
import { WorkerProcess } from '../../support/worker-process';
import { InsecureHttps } from '../../support/insecure-https';

/** How long a hold lasts (the inventory's). */
const HOLD_TTL_MS = 5 * 60_000;

const why = processesPostgresUnavailableSync() ?? (hasRedisServer() ? null : 'no redis-server binary on PATH');
const DAY_MS = 86_400_000;
/** Between two reads of a state awaited from the service or its servers: they cost what they wait on. */
const ASK_EVERY_MS = 50;
/**
 * How long an answer (or a read after an answer built from its decision) waits for the views: long
 * enough that a wait for a frozen worker cannot pass for a slow machine.
 */
const READ_YOUR_WRITES_BOUND_MS = 60_000;
const insecure = new InsecureHttps();
/** Rounds of each race of one request sent to both replicas: one round lost it 3 times in 4 before repeats reported their stream's last event. */
const ROUNDS = 5;
/** The simulated processor's test card that is always declined (README). */

if (why) {
  describe.skip(`two API replicas and a worker on PostgreSQL and Redis — skipped: ${why}`, () => {
    it('needs PostgreSQL and Redis', () => undefined);
  });
} else {
  /**
   * The distributed mode as deployed: two API processes and a worker, all real, on one PostgreSQL
   * database made for the run and a Redis of its own, sharing one DATA_DIR (secrets, TLS material).
   */
  describe('two API replicas and a worker on PostgreSQL and Redis', () => {
    const dir = tempDir('replicas');
    let service: ReplicatedService;
    let database: { url: string };
    let redis: { url: string };
    let env: Record<string, string>;
    let worker: WorkerProcess;
    let workerClock: MovableClock;
    let workerMetricsPort: number;
    let replicas: ApiProcess[] = [];
    let apiKey: string;
    let key: string;
    let basic: string;
    /** Partners the tests use, made with the others before the first test. */
    let budgeted: { api_key: string; requests_per_minute: number };
    let rotating: { api_key: string; partner_id: string };

    beforeAll(async () => {
      const [start, end] = [new Date(Date.now() - DAY_MS).toISOString(), new Date(Date.now() + 7 * DAY_MS).toISOString()];
      workerMetricsPort = await freePort();
      workerClock = new MovableClock(dir.path);
      service = await startReplicatedService({
        label: 'replicas',
        dir: dir.path,
        env: { READ_YOUR_WRITES_TIMEOUT_MS: String(READ_YOUR_WRITES_BOUND_MS) },
        workerEnv: { ...workerClock.env(), METRICS_PORT: String(workerMetricsPort) },
        regions: [chicago],
        deals: [
          { ...spaDay, id: 'replicated-spa', quantity: 50, max_per_user: undefined, start_at: start, end_at: end },
          { ...spaDay, id: 'resold-spa', quantity: 100, max_per_user: undefined, start_at: start, end_at: end },
          { ...spaDay, id: 'killed-spa', quantity: 60, max_per_user: undefined, start_at: start, end_at: end },
          { ...spaDay, id: 'held-spa', quantity: 3, max_per_user: undefined, start_at: start, end_at: end },
          { ...spaDay, id: 'repeated-spa', quantity: 1000, max_per_user: undefined, start_at: start, end_at: end },
          { ...spaDay, id: 'declined-spa', quantity: 20, max_per_user: undefined, start_at: start, end_at: end },
          { ...spaDay, id: 'decided-spa', quantity: 20, max_per_user: undefined, start_at: start, end_at: end },
          { ...cardLinked, id: 'linked-coffee', start_at: start, end_at: end },
        ],
        partners: [
          ['--name', 'Replicated'],
          ['--name', 'Budgeted', '--rate-limit', '40'],
          ['--name', 'Rotating'],
        ],
      });
      ({ database, redis, env, replicas } = service);
      worker = service.worker!;
      let partner: { api_key: string; username: string; password: string };
      [partner, budgeted, rotating] = service.partners;
      apiKey = partner.api_key;
      key = `api_key=${apiKey}`;
      basic = Buffer.from(`${partner.username}:${partner.password}`).toString('base64');
      for (const api of replicas) expect((await api.call('GET', `/deals/replicated-spa?${key}`)).status).toBe(200);
    }, 300_000);

    afterAll(async () => {
      // The processes the tests left running (they restart some).
      if (service) [service.worker, service.replicas] = [worker, replicas];
      await service?.stop();
      dir.remove();
    }, 60_000);

    it('sells exactly the units of a deal that 300 buyers reserve at once through both replicas, with no 5xx', async () => {
      const replies = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          replicas[i % 2].call('POST', `/purchases/reserve?${key}`, { deal_id: 'replicated-spa', num_bought: 1 }),
        ),
      );
      const statuses = replies.map((r) => r.status);
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.filter((s) => s === 200)).toHaveLength(50);
      expect(statuses.filter((s) => s === 422)).toHaveLength(250);
      // Read your writes across processes: either replica shows the deal sold out right after.
      for (const api of replicas) expect((await api.call('GET', `/deals/replicated-spa?${key}`)).body.deal.num_left).toBe(0);
      const id = replies.find((r) => r.status === 200)!.body.purchase.id;
      expect((await replicas[0].call('GET', `/purchases/${id}?${key}`)).body.purchase.fulfillment_state).toBe('reserved');
      expect((await replicas[1].call('GET', `/purchases/${id}?${key}`)).body.purchase.fulfillment_state).toBe('reserved');
    });

    it("answers a purchase from its decision: the other replica shows it at once, the same, and lists it under its user; the deal's units follow", async () => {
      const { userId, cardId } = await buyerWithCard(replicas[0], apiKey, 'decided@example.com');
      for (let round = 0; round < 3; round++) {
        const [buyer, other] = [replicas[round % 2], replicas[(round + 1) % 2]];
        const order = { deal_id: 'decided-spa', quantity: 2, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 };
        const { status, body } = await buyer.call('POST', `/purchases?${key}`, order);
        expect(status).toBe(200);
        const [shown, listed] = await Promise.all([
          other.call('GET', `/purchases/${body.purchase.id}?${key}`),
          other.call('GET', `/users/${userId}/purchases?${key}&per_page=50`),
        ]);
        // Each replica's links name its own origin.
        const anyOrigin = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/https:\/\/localhost:\d+/g, 'https://replica'));
        expect(anyOrigin(shown.body)).toEqual(anyOrigin(body));
        expect(anyOrigin(listed.body.purchases)).toContainEqual(anyOrigin(body.purchase));
        // The replica that answered shows the deal's units at once; the other once the worker has folded them.
        expect((await buyer.call('GET', `/deals/decided-spa?${key}`)).body.deal.num_left).toBe(20 - 2 * (round + 1));
        const numLeft = async () => (await other.call('GET', `/deals/decided-spa?${key}`)).body.deal.num_left as number;
        expect(await eventually(numLeft, (n) => n === 20 - 2 * (round + 1), 30_000, ASK_EVERY_MS)).toBe(20 - 2 * (round + 1));
      }
    });

    it('answers a purchase and shows it through both replicas while the worker is frozen; the views it left follow once it is back', async () => {
      const { userId, cardId } = await buyerWithCard(replicas[0], apiKey, 'frozen-worker@example.com');
      const before = (await replicas[0].call('GET', `/deals/decided-spa?${key}`)).body.deal.num_left as number;
      const order = { deal_id: 'decided-spa', quantity: 1, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 };
      worker.freeze();
      let shown: Array<{ status: number; body: any }>;
      let answered: { status: number; body: any };
      const began = Date.now();
      try {
        answered = await replicas[0].call('POST', `/purchases?${key}`, order);
        expect(answered.status).toBe(200);
        // Its documents were written ahead: neither read waits for the frozen worker (whose views the
        // answering replica would otherwise wait for, up to the bound).
        shown = await Promise.all(replicas.map((api) => api.call('GET', `/purchases/${answered.body.purchase.id}?${key}`)));
      } finally {
        worker.resume();
      }
      expect(Date.now() - began).toBeLessThan(READ_YOUR_WRITES_BOUND_MS);
      expect(shown.map((r) => r.status)).toEqual([200, 200]);
      expect(shown[0].body).toEqual(answered.body);
      // The deal's units, left to the worker: the answering replica's next read of them waits for it.
      expect((await replicas[0].call('GET', `/deals/decided-spa?${key}`)).body.deal.num_left).toBe(before - 1);
    });

    it("answers a declined card only once both replicas show the deal's units back", async () => {
      const buyers = await Promise.all(
        Array.from({ length: 3 }, (_, i) => buyerWithCard(replicas[0], apiKey, `declined${i}@example.com`, DECLINED_TEST_CARD)),
      );
      // One purchase at a time: another's hold, live while its card is tried, would rightly count.
      const seen: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++)
        for (const { userId, cardId } of buyers) {
          const order = { deal_id: 'declined-spa', quantity: 1, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 };
          const reply = await replicas[round % 2].call('POST', `/purchases?${key}`, order);
          const left = await Promise.all(replicas.map(async (r) => (await r.call('GET', `/deals/declined-spa?${key}`)).body.deal.num_left));
          seen.push([reply.status, reply.body.error_type, ...left]);
        }
      expect(seen).toEqual(Array(ROUNDS * buyers.length).fill([422, 'declined', 20, 20]));
    }, 120_000);

    it("spends one partner's budget across both replicas (counted on Redis): exactly its budget is served, the rest 429", async () => {
      expect(budgeted.requests_per_minute).toBe(40);
      const call = (i: number) => replicas[i % 2].call('GET', `/deals/replicated-spa?api_key=${budgeted.api_key}`);
      // One call through each replica first, counted as the others are.
      for (const i of [0, 1]) expect((await call(i)).status).toBe(200);
      const statuses = (await Promise.all(Array.from({ length: 60 }, (_, i) => call(i)))).map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(38);
      expect(statuses.filter((s) => s === 429)).toHaveLength(22);
    });

    it('rotates a key through the CLI: both keys work on both replicas; a revocation refuses the old one on both within a second', async () => {
      const rotated = JSON.parse((await runCli(dir.path, ['partners:rotate-key', rotating.partner_id, '--json'], env)).stdout);
      const status = async (i: number, apiKey: string) => (await replicas[i].call('GET', `/api/v1/regions?api_key=${apiKey}`)).status;
      // The worker has projected the new key: both replicas' views show it.
      await Promise.all(replicas.map((api) => api.ready()));
      for (const i of [0, 1]) expect([await status(i, rotating.api_key), await status(i, rotated.api_key)]).toEqual([200, 200]);
      const revoke = await runCli(dir.path, ['partners:revoke-key', rotating.partner_id, rotated.old_key.prefix, '--json'], env);
      expect(JSON.parse(revoke.stdout)).toMatchObject({ state: 'revoked' });
      // Once each replica's views show the revocation (however long the worker took on this
      // machine), the key it had found is trusted a moment more at most: refused within the second.
      await Promise.all(replicas.map((api) => api.ready()));
      const shownAt = Date.now();
      const refusedAfter: number[] = [];
      for (const i of [0, 1]) {
        expect(
          await eventually(
            () => status(i, rotating.api_key),
            (s) => s === 401,
            60_000,
            10,
          ),
        ).toBe(401);
        refusedAfter.push(Date.now() - shownAt);
      }
      expect(Math.max(...refusedAfter)).toBeLessThan(1_000);
      const refused = await replicas[1].call('GET', `/api/v1/regions?api_key=${rotating.api_key}`);
      expect(refused.body.error_msg).toMatch(/^this api_key was revoked at /);
      for (const i of [0, 1]) expect(await status(i, rotated.api_key)).toBe(200);
    }, 180_000);

    it('answers a key the CLI has just shown on both replicas at once, with no worker to project it', async () => {
      const status = async (i: number, apiKey: string) => (await replicas[i].call('GET', `/api/v1/regions?api_key=${apiKey}`)).status;
      // The worker stopped, the replicas' views do not learn of the new keys: only the log knows them.
      await worker.stop();
      try {
        const partner = JSON.parse((await runCli(dir.path, ['partners:create', '--name', 'Scripted', '--json'], env)).stdout);
        expect([await status(0, partner.api_key), await status(1, partner.api_key)]).toEqual([200, 200]);
        expect([await status(1, partner.test.api_key), await status(0, partner.test.api_key)]).toEqual([200, 200]);
        const rotated = JSON.parse((await runCli(dir.path, ['partners:rotate-key', partner.partner_id, '--json'], env)).stdout);
        expect([await status(1, rotated.api_key), await status(0, rotated.api_key)]).toEqual([200, 200]);
        expect(await status(0, 'dk_wrongwrongwrongwrongwrongwrongw')).toBe(401);
      } finally {
        worker = await WorkerProcess.start(dir.path, { ...env, ...workerClock.env(), METRICS_PORT: String(workerMetricsPort) });
      }
    });

    it("shows the queue on Bull Board at /admin/queues and its jobs at /admin/jobs, behind the operator's credentials", async () => {
      // The operator's CLI reads the same queue on Redis: run meanwhile, its output read below.
      const listing = runCli(dir.path, ['jobs:list'], env);
      const password = (await runCli(dir.path, ['operator:password'], env)).stdout.trim();
      const operator = { authorization: `Basic ${Buffer.from(`operator:${password}`).toString('base64')}` };
      const at = (path: string, headers: Record<string, string> = {}) =>
        request(`https://127.0.0.1:${replicas[1].port}${path}`, { headers, dispatcher: insecure });
      const refused = await at('/admin/queues');
      expect(refused.statusCode).toBe(401);
      await refused.body.text();
      const page = await at('/admin/queues', operator);
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      await page.body.text();
      const queues = await at('/admin/queues/api/queues', operator);
      expect(queues.statusCode).toBe(200);
      expect(((await queues.body.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name)).toEqual(['scheduled-jobs']);
      const jobs = await at('/admin/jobs', operator);
      const list = (await jobs.body.json()) as { backend: string; jobs: Array<{ kind: string }> };
      expect(list.backend).toBe('bullmq');
      expect(list.jobs.map((job) => job.kind)).toContain('arm-digests');
      const listed = await listing;
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^jobs \(bullmq\): /m);
      // The worker serves its metrics on METRICS_PORT: the views it keeps and the queue it runs.
      const scraped = await request(`http://127.0.0.1:${workerMetricsPort}/metrics`);
      expect(scraped.statusCode).toBe(200);
      const text = await scraped.body.text();
      expect(text).toMatch(/^deals_projection_lag_events\{view="deal_details_v3"\} 0$/m);
      expect(text).toMatch(/^deals_scheduled_jobs\{state="waiting"\} \d+$/m);
    }, 120_000);

    it('rebuilds a view on PostgreSQL while the replicas serve, and the worker and replicas go on with the new generation', async () => {
      const before = (await replicas[0].call('GET', `/deals/resold-spa?${key}`)).body.deal;
      let serving = true;
      const reads: number[] = [];
      const reading = (async () => {
        while (serving) reads.push((await replicas[1].call('GET', `/deals/resold-spa?${key}`)).status);
      })();
      const rebuilt = await runCli(dir.path, ['projections:rebuild', 'deal_details_v3'], env);
      serving = false;
      await reading;
      expect(rebuilt.code).toBe(0);
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((s) => s === 200)).toBe(true);
      // The command has ended after dropping the old generation (once every process has had its
      // switch's polls to follow): what any process reads or writes now is the new one.
      expect((await replicas[1].call('GET', `/deals/resold-spa?${key}`)).body.deal).toEqual(before);
      expect((await replicas[0].call('POST', `/purchases/reserve?${key}`, { deal_id: 'resold-spa', num_bought: 1 })).status).toBe(200);
      for (const api of replicas) expect((await api.call('GET', `/deals/resold-spa?${key}`)).body.deal.num_left).toBe(before.num_left - 1);
    });

    it('rebuilds every view in two processes while the replicas serve and sell, each view switched and caught up', async () => {
      const before = (await replicas[0].call('GET', `/deals/resold-spa?${key}`)).body.deal;
      const plan = await runCli(dir.path, ['projections:rebuild', '--workers=2', '--plan', '--json'], env);
      expect(plan.code).toBe(0);
      const { parts } = JSON.parse(plan.stdout) as { parts: string[][] };
      expect(parts).toHaveLength(2);
      expect(parts.flat().sort()).toEqual(ALL_PROJECTIONS.map((p) => p.name).sort());
      let serving = true;
      const reads: number[] = [];
      const sold: number[] = [];
      const reading = (async () => {
        while (serving) {
          reads.push((await replicas[1].call('GET', `/deals/resold-spa?${key}`)).status);
          // Writes go on meanwhile: each lands in the old generation, then in the new one's catch-up.
          if (sold.length < 3)
            sold.push((await replicas[0].call('POST', `/purchases/reserve?${key}`, { deal_id: 'resold-spa', num_bought: 1 })).status);
        }
      })();
      const rebuilt = await runCli(dir.path, ['projections:rebuild', '--workers=2'], env);
      serving = false;
      await reading;
      expect(rebuilt.code).toBe(0);
      expect(rebuilt.stdout).toMatch(/and switched to them\.\n$/);
      expect(rebuilt.stdout).toContain('2 processes');
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((s) => s === 200)).toBe(true);
      expect(sold.every((s) => s === 200)).toBe(true);
      for (const api of replicas)
        await eventually(
          async () => (await api.call('GET', `/deals/resold-spa?${key}`)).body.deal.num_left,
          (left) => left === before.num_left - sold.length,
        );
      for (const api of replicas)
        expect((await api.call('GET', `/deals/resold-spa?${key}`)).body.deal.num_left).toBe(before.num_left - sold.length);
    });

    // A hold lasts five minutes: the worker's clock is moved past them instead of waiting.
    it("releases a hold taken through one replica by the worker's sweep at its expiry, and the other replica sees it", async () => {
      const before = Date.now();
      const reserved = await replicas[0].call('POST', `/purchases/reserve?${key}`, { deal_id: 'held-spa', num_bought: 2 });
      expect(reserved.status).toBe(200);
      const id = reserved.body.purchase.id;
      // The hold's expiry: five minutes from the reservation, rounded up to a second.
      const [earliest, latest] = [before + HOLD_TTL_MS, Date.now() + HOLD_TTL_MS + 1000];
      expect((await replicas[1].call('GET', `/deals/held-spa?${key}`)).body.deal.num_left).toBe(1);
      const queue = new Queue('scheduled-jobs', { connection: { url: redis.url }, prefix: 'replicas' });
      const sweepDue = async () => {
        const job = await queue.getJob('release-due-holds');
        expect(await job?.getState()).toBe('delayed');
        return job!.timestamp + (job!.opts.delay ?? 0);
      };
      try {
        // No job of the reservation's own: one sweep, armed no later than the hold's expiry.
        expect((await queue.getJobs(['delayed'])).filter((j) => JSON.stringify(j.data).includes(id))).toEqual([]);
        expect(await sweepDue()).toBeLessThanOrEqual(latest);
        /**
         * A job of a kind that does nothing here (no test clock's keys to forget), due at `dueAt`:
         * added, it wakes the worker, which runs it once its clock has reached that time.
         */
        const probe = (dueAt: number) =>
          queue.add('forget-test-clock-keys', {}, { jobId: `probe-${dueAt}`, delay: dueAt - Date.now(), removeOnComplete: false });
        // A minute before the expiry the hold stays, whether a sweep ran by then or not (the worker
        // has run a job due a second before that moment).
        await workerClock.advance(earliest - Date.now() - 60_000);
        const waked = await probe(earliest - 61_000);
        expect(
          await eventually(
            () => waked.getState(),
            (state) => state === 'completed',
            60_000,
            ASK_EVERY_MS,
          ),
        ).toBe('completed');
        expect((await replicas[1].call('GET', `/deals/held-spa?${key}`)).body.deal.num_left).toBe(1);
        // Past the expiry: the sweep is due (armed for it, or earlier), and a probe due now wakes the worker to look.
        await workerClock.advance(latest - earliest + 61_000);
        await probe(latest);
        // The lapsed reservation stays as it is (a claim may still be attempted); its units are back.
        const left = () => replicas[1].call('GET', `/deals/held-spa?${key}`).then((r) => r.body.deal.num_left);
        expect(await eventually(left, (n) => n === 3, 60_000, ASK_EVERY_MS)).toBe(3);
        const released = (await runCli(dir.path, ['audit:purchase', id, '--json'], env)).stdout;
        expect(JSON.parse(released).map((e: { type: string }) => e.type)).toContain('UnitsReleased');
        expect((await replicas[0].call('GET', `/deals/held-spa?${key}`)).body.deal.num_left).toBe(3);
      } finally {
        await workerClock.reset();
        await queue.close();
      }
    }, 180_000);

    it('records one purchase for one transaction_reference sent to both replicas at once', async () => {
      const body = {
        deal_id: 'resold-spa',
        quantity: 1,
        transaction_reference: 'replicated-tx-1',
        transaction_date: new Date().toISOString(),
        transaction_amount: 4900,
        first_name: 'Ray',
        last_name: 'Sell',
      };
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          replicas[i % 2].callWithHeaders('POST', '/api/v3/resellers/purchases', body, { authorization: `Basic ${basic}` }),
        ),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
      expect((await replicas[1].call('GET', `/deals/resold-spa?${key}`)).body.deal.number_sold).toBe(1);
    });

    it('charges once for one Idempotency-Key sent to both replicas at once; a repeat to either answers the purchase', async () => {
      const { userId, cardId } = await buyerWithCard(replicas[0], apiKey, 'keyed@replicas.test');
      const sold = async () => (await replicas[1].call('GET', `/deals/repeated-spa?${key}`)).body.deal.number_sold;
      const before = await sold();
      for (let round = 0; round < 3; round++) {
        const order = { deal_id: 'repeated-spa', quantity: 1, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 };
        const headers = { 'idempotency-key': `replicated-order-${round}` };
        const replies = await Promise.all(
          Array.from({ length: 6 }, (_, i) => replicas[i % 2].callWithHeaders('POST', `/purchases?${key}`, order, headers)),
        );
        const bought = replies.filter((r) => r.status === 200);
        expect(bought.length).toBeGreaterThanOrEqual(1);
        expect(new Set(bought.map((r) => r.body.purchase.id)).size).toBe(1);
        for (const reply of replies.filter((r) => r.status !== 200))
          expect([reply.status, reply.body.error_type]).toEqual([409, 'idempotency_key_in_use']);
        for (const api of replicas) {
          const again = await api.callWithHeaders('POST', `/purchases?${key}`, order, headers);
          expect([again.status, again.body.purchase.id]).toEqual([200, bought[0].body.purchase.id]);
        }
        // The deal's count is the worker's to fold; another replica shows it once folded, unwaited.
        expect(await eventually(sold, (n) => n === before + round + 1, 30_000, ASK_EVERY_MS)).toBe(before + round + 1);
      }
      const purchases = (await replicas[0].call('GET', `/users/${userId}/purchases?${key}`)).body.purchases;
      expect(purchases).toHaveLength(3);
    });

    it('replays a request answered through one replica to six repeats sent at once through both: a user, a purchase, a kept 422', async () => {
      const buyer = await buyerWithCard(replicas[0], apiKey, 'six-repeats@replicas.test');
      const declined = await buyerWithCard(replicas[0], apiKey, 'six-repeats-declined@replicas.test', DECLINED_TEST_CARD);
      const order = ({ userId, cardId }: typeof buyer) => ({
        deal_id: 'repeated-spa',
        quantity: 1,
        user_id: userId,
        credit_card_id: cardId,
        expected_price_per_unit: 4900,
      });
      const requests: Array<[string, unknown, number]> = [
        ['/users', { email: 'six-repeats-user@replicas.test' }, 200],
        ['/purchases', order(buyer), 200],
        ['/purchases', order(declined), 422],
      ];
      for (const [round, [path, body, status]] of requests.entries()) {
        const headers = { 'idempotency-key': `six-repeats-${round}` };
        const first = await replicas[round % 2].callWithHeaders('POST', `${path}?${key}`, body, headers);
        expect(first.status).toBe(status);
        const repeats = await Promise.all(
          Array.from({ length: 6 }, (_, i) => replicas[i % 2].callWithHeaders('POST', `${path}?${key}`, body, headers)),
        );
        for (const repeat of repeats)
          expect([repeat.status, repeat.headers['idempotent-replayed'], repeat.body]).toEqual([status, 'true', first.body]);
      }
    });

    it('makes one full purchase and one reservation for one Idempotency-Key sent to both replicas at once', async () => {
      const deal = async () => (await replicas[1].call('GET', `/deals/repeated-spa?${key}`)).body.deal;
      for (let round = 0; round < 2; round++) {
        const before = await deal();
        const full = {
          deal_id: 'repeated-spa',
          quantity: 1,
          user: { email: `full-keyed-${round}@replicas.test` },
          credit_card: { number: TEST_CARDS.visa, verification_value: '123', month: '12', year: '2030', zip_code: '60601' },
        };
        const reservation = { deal_id: 'repeated-spa', num_bought: 2 };
        for (const [path, body, name] of [
          ['/v1/purchases/full.json', full, 'full'],
          ['/purchases/reserve', reservation, 'reserve'],
        ] as const) {
          const headers = { 'idempotency-key': `replicated-${name}-${round}` };
          const replies = await Promise.all(
            Array.from({ length: 6 }, (_, i) => replicas[i % 2].callWithHeaders('POST', `${path}?${key}`, body, headers)),
          );
          const made = replies.filter((r) => r.status === 200);
          expect(made.length).toBeGreaterThanOrEqual(1);
          expect(new Set(made.map((r) => r.body.purchase.id)).size).toBe(1);
          for (const reply of replies.filter((r) => r.status !== 200))
            expect([reply.status, reply.body.error_type]).toEqual([409, 'idempotency_key_in_use']);
          for (const api of replicas)
            expect((await api.callWithHeaders('POST', `${path}?${key}`, body, headers)).body.purchase.id).toBe(made[0].body.purchase.id);
        }
        const after = await deal();
        expect([after.number_sold, after.num_left]).toEqual([before.number_sold + 1, before.num_left - 3]);
      }
    });

    it('loses no unit and sells none twice when a replica is killed mid-load and the worker is killed and restarted; no charge is left without its coupons or its recovery', async () => {
      const buyers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => buyerWithCard(replicas[i % 2], apiKey, `killed${i}@example.com`)),
      );
      let stop = false;
      // Every 5xx with its body, to say which part failed; except, for a purchase asked for while the
      // only worker was away (killed, until the new one's views caught up), the 503 that names it
      // as written but not yet shown when the answer's wait for the views ran out (operations.md,
      // "Faults"): those purchases are read again below.
      let workerAway = false;
      const failures: Array<{ status: number; body: unknown }> = [];
      const notShown: string[] = [];
      /** Purchases answered, and what waits for a number of them. */
      let answered = 0;
      const waiting: Array<{ count: number; reached: () => void }> = [];
      const answeredTo = (count: number) =>
        new Promise<void>((reached) => (answered >= count ? reached() : waiting.push({ count, reached })));
      const load = buyers.map(async ({ userId, cardId }, i) => {
        while (!stop) {
          // Buyers on the replica that is killed move to the other once it is gone.
          const api = replicas[i % 2];
          const askedWhileAway = workerAway;
          const reply = await api
            .call('POST', `/purchases?${key}`, {
              deal_id: 'killed-spa',
              quantity: 1,
              user_id: userId,
              credit_card_id: cardId,
              expected_price_per_unit: 4900,
            })
            .catch(() => null);
          if (!reply) continue; // its replica killed mid-call: the buyer's next call goes to the other
          if (askedWhileAway && reply.status === 503 && reply.body.error_type === 'service_unavailable' && reply.body.purchase_id)
            notShown.push(reply.body.purchase_id);
          else if (reply.status >= 500) failures.push({ status: reply.status, body: reply.body });
          answered++;
          for (const w of waiting.filter((w) => answered >= w.count)) {
            waiting.splice(waiting.indexOf(w), 1);
            w.reached();
          }
        }
      });
      // Killed with the load under way; the load goes on until purchases asked for once the new
      // worker's views have caught up are answered too.
      await answeredTo(12);
      const killed = replicas[0];
      await killed.kill();
      replicas[0] = replicas[1];
      workerAway = true;
      await worker.kill();
      worker = await WorkerProcess.start(dir.path, env);
      await replicas[1].ready();
      workerAway = false;
      // Each buyer's purchase under way, then one asked for after.
      await answeredTo(answered + 2 * buyers.length);
      stop = true;
      await Promise.all(load);
      // Started again for the tests after this one, while this one reads what was written.
      const restarted = ApiProcess.start(dir.path, killed.port, env);
      try {
        expect(failures).toEqual([]);
        // A purchase answered 503 while the worker was away is there once the views show it: charged, with its coupon.
        for (const id of notShown) {
          const purchase = (
            await eventually(
              () => replicas[1].call('GET', `/purchases/${id}?${key}`),
              (r) => r.status === 200,
              60_000,
              ASK_EVERY_MS,
            )
          ).body.purchase;
          expect([id, purchase.fulfillment_state, purchase.payment_state, purchase.coupons.length]).toEqual([
            id,
            'fulfilled',
            'charged',
            1,
          ]);
        }

        // The log, folded as an auditor would.
        const db = new Client({ connectionString: database.url });
        await db.connect();
        const rows = (await db.query("SELECT type, data FROM events WHERE stream_id = 'inventory-killed-spa' ORDER BY revision"))
          .rows as Array<{
          type: string;
          data: { total: number; holdId: string; quantity: number; expiresAt: string };
        }>;
        await db.end();
        const { total, sold, held } = auditedInventory(rows);
        expect(sold).toBeGreaterThan(0);
        expect(sold + held).toBeLessThanOrEqual(total);
        // The views caught up with the log, on both replicas.
        const shownSold = () => replicas[1].call('GET', `/deals/killed-spa?${key}`).then((r) => r.body.deal.number_sold);
        expect(await eventually(shownSold, (n) => n === sold, 60_000, ASK_EVERY_MS)).toBe(sold);
        // The processor: every approved charge is a fulfilled purchase with a coupon a unit, or a
        // purchase the killed replica was charging, whose recovery job is armed on Redis.
        const vault = new Client({ connectionString: database.url });
        await vault.connect();
        const approved = (
          await vault.query<{ id: string }>("SELECT idempotency_key AS id FROM payment_charges WHERE status = 'approved'")
        ).rows.map((r) => r.id);
        await vault.end();
        const queue = new Queue('scheduled-jobs', { connection: { url: redis.url }, prefix: 'replicas' });
        try {
          for (const id of approved) {
            const purchase = (await replicas[1].call('GET', `/purchases/${id}?${key}`)).body.purchase;
            if (purchase.fulfillment_state === 'fulfilled')
              expect([purchase.payment_state, purchase.coupons.length]).toEqual(['charged', purchase.number_bought]);
            else {
              expect(purchase.fulfillment_state).toBe('reserved');
              expect(await queue.getJob(`recover-purchase-${id}`)).toBeDefined();
            }
          }
        } finally {
          await queue.close();
        }
      } finally {
        replicas[0] = await restarted;
      }
    }, 240_000);

    /**
     * One request sent to both replicas at the same moment (a client's retry, a load balancer's
     * duplicate): one writes, the other finds nothing to write, and must still answer what was
     * written, from views the worker fills a little later.
     */
    describe('one request sent to both replicas at once: both answer what was written', () => {
      /** Each round's replies to `copies` of one request, half through each replica; what answered wrong, by round. */
      const wrongAnswers = async <T>(
        copies: number,
        request: (api: ApiProcess, round: number) => Promise<T>,
        wrong: (reply: T) => unknown,
      ): Promise<unknown[]> => {
        const found: unknown[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const replies = await Promise.all(Array.from({ length: copies }, (_, i) => request(replicas[i % 2], round)));
          for (const reply of replies) {
            const what = wrong(reply);
            if (what) found.push([round, what]);
          }
        }
        return found;
      };
      const users = new Map<string, string>();
      /** A new user per round and name, made before the round's requests. */
      const userOf = async (name: string, round: number) => {
        const label = `${name}${round}`;
        if (!users.has(label))
          users.set(label, (await replicas[0].call('POST', `/users?${key}`, { email: `${label}@repeats.test` })).body.user_id);
        return users.get(label)!;
      };
      type Reply = { status: number; body: any };
      const not200 = (r: Reply) => r.status !== 200 && [r.status, r.body];

      it('a reseller sale: every answer is the sale with its coupons', async () => {
        const sale = (round: number) => ({
          deal_id: 'repeated-spa',
          quantity: 2,
          transaction_reference: `repeated-tx-${round}`,
          transaction_date: new Date().toISOString(),
          transaction_amount: 4900,
          first_name: 'Ray',
          last_name: 'Sell',
        });
        const wrong = await wrongAnswers(
          6,
          (api, round) => api.callWithHeaders('POST', '/api/v3/resellers/purchases', sale(round), { authorization: `Basic ${basic}` }),
          (r: Reply) => (r.status !== 200 || r.body.coupons?.length !== 2) && [r.status, r.body],
        );
        expect(wrong).toEqual([]);
      }, 120_000);

      it('POST /saved_deals: both answer the saved deal', async () => {
        for (let round = 0; round < ROUNDS; round++) await userOf('saver', round);
        const wrong = await wrongAnswers(
          2,
          async (api, round) => api.call('POST', `/saved_deals?${key}`, { user_id: await userOf('saver', round), deal_id: 'repeated-spa' }),
          not200,
        );
        expect(wrong).toEqual([]);
      }, 120_000);

      it('POST /users/:id/subscriptions: both answer the subscription', async () => {
        for (let round = 0; round < ROUNDS; round++) await userOf('subscriber', round);
        const wrong = await wrongAnswers(
          2,
          async (api, round) => api.call('POST', `/users/${await userOf('subscriber', round)}/subscriptions?${key}`, { zip: '60601' }),
          not200,
        );
        expect(wrong).toEqual([]);
      }, 120_000);

      it('update_by_email for a new email, the same body: both answer the user', async () => {
        const wrong = await wrongAnswers(
          2,
          (api, round) =>
            api.call('PUT', `/api/v1/users/${encodeURIComponent(`byemail${round}@repeats.test`)}/update_by_email?${key}`, {
              first_name: 'Same',
            }),
          not200,
        );
        expect(wrong).toEqual([]);
      }, 120_000);

      it('the same card stored: each answering replica lists it at once', async () => {
        for (let round = 0; round < ROUNDS; round++) await userOf('holder', round);
        const wrong = await wrongAnswers(
          2,
          async (api, round) => {
            const user = await userOf('holder', round);
            const card = { user_id: user, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
            const stored = await api.call('POST', `/credit_cards?${key}`, card);
            if (stored.status !== 200) return stored;
            // Read your writes on the replica that answered: its user's cards list the card.
            const listed = await api.call('GET', `/credit_cards?user_id=${user}&${key}`);
            const ids = (listed.body.credit_cards ?? []).map((c: { id: string }) => c.id);
            return ids.includes(stored.body.credit_card_id) ? listed : { status: 0, body: listed.body };
          },
          not200,
        );
        expect(wrong).toEqual([]);
      }, 120_000);

      it('PUT /purchases/:id/release: both answer it released', async () => {
        const reserved: string[] = [];
        for (let round = 0; round < ROUNDS; round++)
          reserved.push(
            (await replicas[0].call('POST', `/purchases/reserve?${key}`, { deal_id: 'repeated-spa', num_bought: 1 })).body.purchase.id,
          );
        const wrong = await wrongAnswers(
          2,
          (api, round) => api.call('PUT', `/purchases/${reserved[round]}/release?${key}`, {}),
          (r: Reply) =>
            (r.status !== 200 || r.body.purchase.fulfillment_state !== 'released') && [r.status, r.body.purchase?.fulfillment_state],
        );
        expect(wrong).toEqual([]);
      }, 120_000);

      it('POST /card_links: both answer the link', async () => {
        for (let round = 0; round < ROUNDS; round++) await userOf('linker', round);
        const wrong = await wrongAnswers(
          2,
          async (api, round) =>
            api.call('POST', `/card_links?${key}`, { user_id: await userOf('linker', round), deal_id: 'linked-coffee' }),
          (r: Reply) => (r.status !== 200 || !r.body.card_link) && [r.status, r.body],
        );
        expect(wrong).toEqual([]);
      }, 120_000);
    });
  });
}
