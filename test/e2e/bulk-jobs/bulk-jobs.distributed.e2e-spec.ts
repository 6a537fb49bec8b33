import { ManualClock } from '@deals/kernel';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { TestApi } from '../../support/api-harness';
import { eventually } from '../../support/eventually';
import { createTestDatabase, postgresUnavailableSync } from '../../support/postgres';
import { hasRedisServer, startRedisServer } from '../../support/redis-server';

/** The BullMQ scheduler's queue (libs/adapters/src/scheduler/bullmq/bullmq-scheduler.adapter.ts). */
const QUEUE = 'scheduled-jobs';
const redis = hasRedisServer() ? 'redis-server' : process.env.REDIS_URL ? 'REDIS_URL' : undefined;
const postgres = postgresUnavailableSync();
const skipped = !redis ? 'no redis-server binary on PATH and REDIS_URL is unset' : postgres;

if (skipped) {
  describe.skip(`bulk jobs on PostgreSQL and BullMQ — skipped: ${skipped}`, () => {
    it('needs PostgreSQL and Redis', () => undefined);
  });
} else {
  /**
   * The distributed adapters: the job's items and results in the PostgreSQL log, each chunk a BullMQ
   * job; what PostgreSQL's JSON cannot hold (a NUL) is refused before it reaches the log.
   */
  describe(`bulk jobs on PostgreSQL and BullMQ (${redis})`, () => {
    let url = process.env.REDIS_URL ?? '';
    let stopServer: (() => Promise<void>) | undefined;
    const prefix = `bulk-jobs-${randomUUID()}`;
    let database: { url: string; drop: () => Promise<void> };
    let api: TestApi;
    let apiKey: string;

    beforeAll(async () => {
      if (redis === 'redis-server') {
        const server = await startRedisServer();
        url = server.url;
        stopServer = server.stop;
      }
      database = await createTestDatabase('bulkjobs');
      api = await TestApi.start({
        clock: new ManualClock(new Date('2026-06-15T12:00:00Z')),
        env: { DATABASE_URL: database.url, REDIS_URL: url, REDIS_PREFIX: prefix, RUN_PROJECTIONS: 'on' },
      });
      apiKey = (await api.createPartner()).apiKey;
    });
    afterAll(async () => {
      await api?.close();
      await database?.drop();
      const queue = new Queue(QUEUE, { connection: { url }, prefix });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await stopServer?.();
    });

    const status = async (id: string) => (await api.call('GET', `/v1/bulk_jobs/${id}`, { apiKey })).body.bulk_job;

    it("runs a partner's jobs one after the other to the end, each item once", async () => {
      const job = (n: number, from: number) =>
        api.call('POST', '/v1/bulk_jobs', {
          apiKey,
          body: {
            kind: 'users',
            items: Array.from({ length: n }, (_, i) => ({ reference: `p-${from + i}`, email: `pg${from + i}@example.com` })),
          },
        });
      const first = (await job(450, 0)).body.bulk_job.id as string;
      const second = (await job(10, 440)).body.bulk_job.id as string;
      const done = await eventually(
        () => status(second),
        (s) => s.status === 'completed',
        60_000,
        20,
      );
      expect(await status(first)).toMatchObject({ status: 'completed', succeeded_count: 450 });
      // The second's first ten references were the first's last ten: already done.
      expect(done).toMatchObject({ already_done_count: 10, succeeded_count: 0 });
    });

    it('refuses a reference PostgreSQL cannot keep, and the partner’s next job runs', async () => {
      const refused = await api.call('POST', '/v1/bulk_jobs', {
        apiKey,
        body: { kind: 'users', items: [{ reference: 'row-\u0000-1', email: 'n@example.com' }] },
      });
      expect(refused.status).toBe(422);
      const next = (
        await api.call('POST', '/v1/bulk_jobs', {
          apiKey,
          body: { kind: 'users', items: [{ reference: 'row-2', email: 'n2@example.com' }] },
        })
      ).body.bulk_job.id as string;
      expect(
        await eventually(
          () => status(next),
          (s) => s.status === 'completed',
          60_000,
          20,
        ),
      ).toMatchObject({ succeeded_count: 1 });
    });
  });
}
