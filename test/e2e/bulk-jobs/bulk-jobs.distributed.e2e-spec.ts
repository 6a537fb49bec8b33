import { IssuePartnerApiKey, RevokePartnerApiKey, UserWrites } from '@deals/accounts';
import { ManualClock, OPERATOR } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
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

    it('cancels the open jobs of a key revoked meanwhile (credential_revoked), the running one after its chunk under way', async () => {
      const partner = await api.createPartner('Revoked on PostgreSQL');
      const spare = await api.get(CommandBus).execute(new IssuePartnerApiKey(partner.partnerId, 'spare', OPERATOR));
      await api.settle();
      // The running job's first item waits until the test lets it go.
      const users = api.get(UserWrites);
      const register = users.register.bind(users);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let held!: () => void;
      const holding = new Promise<void>((resolve) => (held = resolve));
      const hold = jest.spyOn(users, 'register').mockImplementation(async (user, ...rest) => {
        if (user.profile.email === 'rv-0@example.com') {
          held();
          await gate;
        }
        return register(user, ...rest);
      });
      try {
        const send = async (n: number, from: number) =>
          (
            await api.call('POST', '/v1/bulk_jobs', {
              apiKey: partner.apiKey,
              body: {
                kind: 'users',
                items: Array.from({ length: n }, (_, i) => ({ reference: `rv-${from + i}`, email: `rv-${from + i}@example.com` })),
              },
            })
          ).body.bulk_job.id as string;
        const running = await send(250, 0);
        const queued = await send(1, 250);
        await holding;
        await api.get(CommandBus).execute(new RevokePartnerApiKey(partner.partnerId, partner.keyId, OPERATOR));
        const seen = async (id: string) => (await api.call('GET', `/v1/bulk_jobs/${id}`, { apiKey: spare.apiKey })).body.bulk_job;
        expect(
          await eventually(
            () => seen(queued),
            (s) => s.status === 'cancelled',
            60_000,
            20,
          ),
        ).toMatchObject({ processed_count: 0, cancellation_reason: 'credential_revoked' });
        expect(
          await eventually(
            () => seen(running),
            (s) => s.status === 'cancelling',
            60_000,
            20,
          ),
        ).toMatchObject({ cancellation_reason: 'credential_revoked' });
        release();
        expect(
          await eventually(
            () => seen(running),
            (s) => s.status === 'cancelled',
            60_000,
            20,
          ),
        ).toMatchObject({ processed_count: 200, cancellation_reason: 'credential_revoked' });
      } finally {
        release();
        hold.mockRestore();
      }
    });
  });
}
