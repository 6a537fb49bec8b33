import { Queue } from 'bullmq';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { runCli } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { databaseOfItsOwn, processesPostgresUnavailableSync } from '../../support/private-postgres';
import { hasRedisServer, startRedisServer } from '../../support/redis-server';
import { tempDir } from '../../support/temp-dir';
import { TEST_CARDS } from '../../support/test-cards';
import { ReceivedWebhook, WebhookReceiver } from '../../support/webhook-receiver';
import { WorkerProcess } from '../../support/worker-process';

const why = processesPostgresUnavailableSync() ?? (hasRedisServer() ? null : 'no redis-server binary on PATH');
const DAY_MS = 86_400_000;
const RETRY_MS = 300;
/** How long a wait for what the service does may take before it is taken as hung. */
const HUNG_MS = 60_000;
/** Between two reads of a state awaited from the service or its servers: they cost what they wait on. */
const ASK_EVERY_MS = 50;

interface Delivery {
  endpoint_id: string;
  status: string;
  attempts: Array<{ attempt: number; status: number | null; response: string }>;
}

if (why) {
  describe.skip(`webhooks from two API replicas and a worker — skipped: ${why}`, () => {
    it('needs PostgreSQL and Redis', () => undefined);
  });
} else {
  /**
   * Webhooks in the distributed mode (issue 37): two API processes and a worker, all real, on a
   * PostgreSQL database of the run and a Redis of its own; the worker keeps the feed and runs the
   * BullMQ jobs that send to a real HTTPS receiver (trusted through NODE_EXTRA_CA_CERTS). Events
   * made through both replicas at once are each sent once per attempt, and the attempts either
   * replica lists are those the receiver saw.
   */
  describe('webhooks from two API replicas and a worker on PostgreSQL and Redis', () => {
    jest.setTimeout(120_000);
    const dir = tempDir('webhook-replicas');
    let receiver: WebhookReceiver;
    let database: { url: string; drop: () => Promise<void> };
    let redis: { url: string; stop(): Promise<void> };
    /** The jobs' queue on Redis, to see which deliveries are still to run. */
    let queue: Queue;
    let worker: WorkerProcess;
    /** A second worker, started by the test that needs one and kept for the next. */
    let second: WorkerProcess | undefined;
    let replicas: ApiProcess[] = [];
    let apiKey: string;
    /** A partner of its own for the registrations' race. */
    let racingKey: string;
    let env: Record<string, string>;

    beforeAll(async () => {
      [receiver, database, redis] = await Promise.all([WebhookReceiver.start(), databaseOfItsOwn('webhooks'), startRedisServer()]);
      env = {
        DATABASE_URL: database.url,
        REDIS_URL: redis.url,
        REDIS_PREFIX: 'webhooks',
        NODE_EXTRA_CA_CERTS: receiver.caFile,
        WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'on',
        WEBHOOK_RETRY_DELAYS_MS: Array(7).fill(RETRY_MS).join(','),
      };
      queue = new Queue('scheduled-jobs', { connection: { url: redis.url }, prefix: 'webhooks' });
      writeFileSync(join(dir.path, 'regions.json'), JSON.stringify([chicago]));
      const [start, end] = [new Date(Date.now() - DAY_MS).toISOString(), new Date(Date.now() + 7 * DAY_MS).toISOString()];
      writeFileSync(
        join(dir.path, 'deals.json'),
        JSON.stringify([{ ...spaDay, quantity: 100, max_per_user: undefined, start_at: start, end_at: end }]),
      );
      // The partner made and the catalogue imported while the processes start.
      const partnerMade = (name: string) =>
        runCli(dir.path, ['partners:create', '--name', name, '--json'], env).then((r) => JSON.parse(r.stdout).api_key as string);
      [apiKey, racingKey, worker, replicas] = await Promise.all([
        partnerMade('Hooked'),
        partnerMade('Racing'),
        WorkerProcess.start(dir.path, env),
        Promise.all([freePort(), freePort()].map(async (port) => ApiProcess.start(dir.path, await port, env))),
        (async () => {
          expect((await runCli(dir.path, ['regions:import', join(dir.path, 'regions.json')], env)).code).toBe(0);
          expect((await runCli(dir.path, ['deals:import', join(dir.path, 'deals.json')], env)).code).toBe(0);
        })(),
      ]);
      // The worker has projected everything written: each replica reads the deal.
      await Promise.all(replicas.map((api) => api.ready()));
      for (const api of replicas) expect((await call(api, 'GET', `/deals/${spaDay.id}`)).status).toBe(200);
    }, 300_000);

    afterAll(async () => {
      await Promise.all(replicas.map((api) => api.stop()));
      await worker?.stop();
      await second?.stop();
      await queue?.close();
      await redis?.stop();
      await database?.drop();
      await receiver?.close();
      dir.remove();
    }, 60_000);

    const call = (api: ApiProcess, method: string, path: string, body?: unknown) =>
      api.call(method, `${path}${path.includes('?') ? '&' : '?'}api_key=${apiKey}`, body);
    const register = async (path: string) => {
      const reply = await call(replicas[0], 'POST', '/v1/webhook_endpoints', { url: receiver.url(path), types: ['*'] });
      expect(reply.status).toBe(201);
      return reply.body.webhook_endpoint.id as string;
    };
    /** Users made through both replicas at once, half through each. */
    const makeUsers = (label: string, count: number) =>
      Promise.all(
        Array.from({ length: count }, async (_, i) => {
          const reply = await call(replicas[i % 2], 'POST', '/users', { email: `${label}${i}@hooked.test` });
          expect(reply.status).toBe(200);
          return reply.body.user_id as string;
        }),
      );
    const at = (path: string) => (r: ReceivedWebhook) => r.path === path;
    /** How many requests the receiver got at `path` for each webhook-id. */
    const countsAt = (path: string) => {
      const counts = new Map<string, number>();
      for (const r of receiver.received.filter(at(path)))
        counts.set(String(r.headers['webhook-id']), (counts.get(String(r.headers['webhook-id'])) ?? 0) + 1);
      return counts;
    };
    /** The partner's feed as a replica lists it, a page of 1000. */
    const feedOf = async (api: ApiProcess) => {
      const reply = await call(api, 'GET', '/v1/events?per_page=1000');
      expect(reply.status).toBe(200);
      return reply.body.events as Array<{ id: string; type: string }>;
    };
    /** The deliveries of an event (to `endpointId`, or to every endpoint) as replica B lists them, once none is pending. */
    const settledDeliveries = async (eventId: string, endpointId?: string): Promise<Delivery[]> =>
      eventually(
        async () =>
          ((await call(replicas[1], 'GET', `/v1/events/${eventId}/attempts`)).body.deliveries as Delivery[]).filter(
            (d) => endpointId === undefined || d.endpoint_id === endpointId,
          ),
        (deliveries) => deliveries.length > 0 && deliveries.every((d) => d.status !== 'pending'),
        HUNG_MS,
        ASK_EVERY_MS,
      );
    /**
     * Once nothing more of `events` can be sent (a duplicate, an attempt too many): every delivery
     * of each settled as replica B lists it, and no delivery job left on the queue, waiting, due or
     * running (a job still to run finds its delivery settled and sends nothing).
     */
    const nothingMoreToSend = async (events: Array<{ id: string }>) => {
      await Promise.all(events.map((event) => settledDeliveries(event.id)));
      const deliveryJobs = async () =>
        (await queue.getJobs(['active', 'waiting', 'delayed', 'prioritized'])).filter((job) => job?.name === 'deliver-webhook');
      expect(await eventually(deliveryJobs, (jobs) => jobs.length === 0, HUNG_MS, ASK_EVERY_MS)).toEqual([]);
    };

    it('sends each event made through both replicas at once to an endpoint exactly once, and both replicas list the same feed', async () => {
      const endpoint = await register('/all');
      const users = await makeUsers('user', 30);
      // A few purchases, through both replicas at once.
      const bought = await Promise.all(
        users.slice(0, 4).map(async (userId, i) => {
          const api = replicas[i % 2];
          const card = { user_id: userId, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
          const cardId = (await call(api, 'POST', '/credit_cards', card)).body.credit_card_id;
          const order = { deal_id: spaDay.id, quantity: 1, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 };
          return (await call(api, 'POST', '/purchases', order)).status;
        }),
      );
      expect(bought).toEqual([200, 200, 200, 200]);

      // The feed is read by cursor: answers do not wait for it (docs/webhooks.md).
      await replicas[0].ready();
      const feed = await feedOf(replicas[0]);
      expect(feed.filter((e) => e.type === 'user.created')).toHaveLength(30);
      expect(feed.filter((e) => e.type === 'purchase.completed')).toHaveLength(4);
      await receiver.waitFor(feed.length, at('/all'), HUNG_MS);
      await nothingMoreToSend(feed);
      // Once each, nothing else.
      const counts = countsAt('/all');
      expect(new Set(counts.keys())).toEqual(new Set(feed.map((e) => e.id)));
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      // The same feed, in the same order, through either replica.
      expect((await feedOf(replicas[1])).map((e) => e.id)).toEqual(feed.map((e) => e.id));
      // Paged by cursor, each page from the other replica; and by type.
      const paged: string[] = [];
      for (let after = '', i = 0; ; i++) {
        const page = (await call(replicas[i % 2], 'GET', `/v1/events?per_page=7${after && `&after=${after}`}`)).body;
        paged.push(...page.events.map((e: { id: string }) => e.id));
        if (!page.has_more) break;
        after = page.next_cursor;
      }
      expect(paged).toEqual(feed.map((e) => e.id));
      const purchases = (await call(replicas[1], 'GET', '/v1/events?types=purchase.completed&per_page=1000')).body.events;
      expect(purchases.map((e: { id: string }) => e.id)).toEqual(feed.filter((e) => e.type === 'purchase.completed').map((e) => e.id));
      // Each event's attempts, as replica B lists them: one, succeeded, as the receiver saw.
      for (const event of feed) {
        const deliveries = await settledDeliveries(event.id, endpoint);
        expect([event.id, deliveries.map((d) => [d.status, d.attempts.map((a) => [a.attempt, a.status])])]).toEqual([
          event.id,
          [['succeeded', [[1, 200]]]],
        ]);
      }
    });

    it('retries a receiver failing the first attempt of each event: two attempts each in all, the first failed, never more', async () => {
      const endpoint = await register('/flaky');
      receiver.answerBy((r) =>
        r.path === '/flaky' && countsAt('/flaky').get(String(r.headers['webhook-id'])) === 1
          ? { status: 500, body: 'not yet' }
          : { status: 200 },
      );
      const before = new Set((await feedOf(replicas[0])).map((e) => e.id));
      await makeUsers('flaky', 10);
      await replicas[1].ready();
      const fresh = (await feedOf(replicas[1])).filter((e) => !before.has(e.id));
      expect(fresh).toHaveLength(10);
      await receiver.waitFor(2 * fresh.length, at('/flaky'), HUNG_MS);
      await nothingMoreToSend(fresh);
      const counts = countsAt('/flaky');
      expect(new Set(counts.keys())).toEqual(new Set(fresh.map((e) => e.id)));
      expect([...counts.values()].filter((n) => n !== 2)).toEqual([]);
      for (const event of fresh) {
        const deliveries = await settledDeliveries(event.id, endpoint);
        expect([event.id, deliveries.map((d) => [d.status, d.attempts.map((a) => [a.attempt, a.status, a.response])])]).toEqual([
          event.id,
          [
            [
              'succeeded',
              [
                [1, 500, 'not yet'],
                [2, 200, ''],
              ],
            ],
          ],
        ]);
      }
      // The first endpoint got the new events once each.
      const all = countsAt('/all');
      expect(fresh.map((e) => all.get(e.id))).toEqual(Array(fresh.length).fill(1));
      receiver.answerBy(() => ({ status: 200 }));
    });

    // Both workers keep the feed and arm each delivery from their commits: a job armed again after
    // it ran, before the feed showed its record, once sent the event a second time (1 run in 3).
    it('sends each event once with a second worker beside the first', async () => {
      second = await WorkerProcess.start(dir.path, env);
      const before = new Set((await feedOf(replicas[0])).map((e) => e.id));
      await makeUsers('twice', 30);
      await replicas[1].ready();
      const fresh = (await feedOf(replicas[1])).filter((e) => !before.has(e.id));
      expect(fresh).toHaveLength(30);
      await receiver.waitFor(before.size + fresh.length, at('/all'), HUNG_MS);
      await nothingMoreToSend(fresh);
      const all = countsAt('/all');
      expect(fresh.map((e) => all.get(e.id))).toEqual(Array(fresh.length).fill(1));
    });

    // Where several workers run, the views are divided among them by leases: a killed worker's
    // views are taken over once its leases lapse (3 s), the feed's pending deliveries armed again.
    it("divides the views between two workers, and the one left takes a killed one's over within seconds: every event sent once", async () => {
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      const keepers = async () =>
        (
          await admin.query<{ keeper: string; views: number }>(
            `SELECT keeper, count(*)::int AS views FROM view_leases WHERE keeper IS NOT NULL AND expires_at > clock_timestamp() GROUP BY keeper`,
          )
        ).rows;
      // The second worker of the test before (started here when that one failed before it).
      second ??= await WorkerProcess.start(dir.path, env);
      try {
        const total = (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM view_leases')).rows[0].n;
        const divided = await eventually(keepers, (held) => held.length === 2, HUNG_MS, ASK_EVERY_MS);
        expect(divided.map((k) => k.views).sort((a, b) => a - b)).toEqual([Math.floor(total / 2), Math.ceil(total / 2)]);
        const before = new Set((await feedOf(replicas[0])).map((e) => e.id));
        await worker.kill();
        const killedAt = Date.now();
        const made = makeUsers('takeover', 20);
        const tookOver = await eventually(keepers, (held) => held.length === 1 && held[0].views === total, HUNG_MS, ASK_EVERY_MS);
        const tookMs = Date.now() - killedAt;
        expect(tookOver.map((k) => k.views)).toEqual([total]);
        process.stdout.write(`a worker killed: all ${total} views held by the other ${tookMs} ms later\n`);
        expect(tookMs).toBeLessThan(8_000);
        await made;
        const fresh = await eventually(
          async () => (await feedOf(replicas[1])).filter((e) => !before.has(e.id)),
          (events) => events.length >= 20,
          HUNG_MS,
          ASK_EVERY_MS,
        );
        expect(fresh).toHaveLength(20);
        await receiver.waitFor(before.size + fresh.length, at('/all'), HUNG_MS);
        await nothingMoreToSend(fresh);
        const all = countsAt('/all');
        expect(fresh.map((e) => all.get(e.id))).toEqual(Array(fresh.length).fill(1));
        // The one left serves the tests after this one.
        worker = second;
        second = undefined;
      } finally {
        await admin.end();
      }
    });

    it('makes at most 16 endpoints of 60 registrations at once, half through each replica', async () => {
      const key = racingKey;
      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          replicas[i % 2].call('POST', `/v1/webhook_endpoints?api_key=${key}`, {
            url: receiver.url(`/race/${i}`),
            types: ['user.created'],
          }),
        ),
      );
      expect({
        made: replies.filter((r) => r.status === 201).length,
        first: replies.find((r) => r.status !== 201 && r.status !== 422)?.body,
      }).toEqual({ made: 16, first: undefined });
      for (const refused of replies.filter((r) => r.status !== 201))
        expect([refused.status, refused.body.errors]).toEqual([
          422,
          [{ type: 'invalid', resource: 'webhook_endpoint', field: 'url', message: 'a partner has at most 16 endpoints' }],
        ]);
      for (const api of replicas)
        expect((await api.call('GET', `/v1/webhook_endpoints?api_key=${key}`)).body.webhook_endpoints).toHaveLength(16);
    });
  });
}
