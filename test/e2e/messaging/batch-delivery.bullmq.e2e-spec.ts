import { ManualClock } from '@deals/kernel';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { hasRedisServer, startRedisServer } from '../../support/redis-server';
import { SmtpSink } from '../../support/smtp-sink';

/** The BullMQ scheduler's queue (libs/adapters/src/scheduler/bullmq/bullmq-scheduler.adapter.ts). */
const QUEUE = 'scheduled-jobs';
const source = hasRedisServer() ? 'redis-server' : process.env.REDIS_URL ? 'REDIS_URL' : undefined;
const deal = { ...spaDay, id: 'chicago-spa-season', start_at: '2026-06-01T00:00:00Z', end_at: '2026-12-31T00:00:00Z' };

if (!source) {
  const reason = 'no redis-server binary on PATH and REDIS_URL is unset';
  describe.skip(`batch delivery on BullMQ — skipped: ${reason}`, () => {
    it('needs Redis', () => undefined);
  });
} else {
  describe(`batch delivery on BullMQ (${source})`, () => {
    const clock = new ManualClock(new Date('2026-07-01T23:59:59Z'));
    const prefix = `batches-${randomUUID()}`;
    let url = process.env.REDIS_URL ?? '';
    let stopServer: (() => Promise<void>) | undefined;
    let sink: SmtpSink;
    let api: TestApi;
    let queue: Queue;
    let apiKey: string;
    beforeAll(async () => {
      if (source === 'redis-server') ({ url, stop: stopServer } = await startRedisServer());
      sink = await SmtpSink.start();
      api = await TestApi.start({ clock, env: { REDIS_URL: url, REDIS_PREFIX: prefix, SMTP_URL: sink.url } });
      apiKey = (await api.createPartner()).apiKey;
      await api.importRegions([chicago]);
      await api.importDeals([deal]);
      queue = new Queue(QUEUE, { connection: { url }, prefix });
    });
    afterAll(async () => {
      await api?.close();
      await queue?.obliterate({ force: true }).catch(() => undefined);
      await queue?.close();
      await sink?.close();
      await stopServer?.();
    });

    const schedule = async (email: string, day: string) => {
      clock.set(`2026-07-${day}T23:59:59Z`);
      const userId = (await api.call('POST', '/users', { apiKey, body: { email } })).body.user_id;
      const next = String(Number(day) + 1).padStart(2, '0');
      const reply = await api.call('POST', '/v1/targeted_email/batches', {
        apiKey,
        body: { deal_id: deal.id, user_ids: [userId], mode: 'suppress', send_at: `2026-07-${next}T00:00:00Z` },
      });
      expect(reply.status).toBe(201);
      return reply.body.batch.id as string;
    };
    const status = async (id: string) =>
      (await api.call('GET', `/v1/targeted_email/batches/${id}?deal_id=${deal.id}`, { apiKey })).body.batch.status;
    const processed = (status: string) => status === 'processed';

    it("fires the batch's delayed job at send_at: the email goes out, the batch is processed and the job is gone", async () => {
      const id = await schedule('on-time@example.com', '01');
      const job = await queue.getJob(`deliver-batch-${id}`);
      expect(job && (await job.getState())).toBe('delayed');
      clock.advance(2000);
      expect(await eventually(() => status(id), processed)).toBe('processed');
      expect(sink.to('on-time@example.com')).toHaveLength(1);
      const left = await eventually(
        () => queue.getJob(`deliver-batch-${id}`),
        (job) => job === undefined,
      );
      expect(left).toBeUndefined();
    });

    it('removes the job on cancel: nothing is sent at send_at', async () => {
      const id = await schedule('cancelled@example.com', '03');
      const witness = await schedule('witness@example.com', '03');
      expect(await queue.getJob(`deliver-batch-${id}`)).toBeDefined();
      expect((await api.call('DELETE', `/v1/targeted_email/batches/${id}?deal_id=${deal.id}`, { apiKey })).body.batch.status).toBe(
        'cancelled',
      );
      expect(await queue.getJob(`deliver-batch-${id}`)).toBeUndefined();
      clock.advance(2000);
      // A batch due at the same instant, delivered: the worker has run what was due then.
      expect(await eventually(() => status(witness), processed)).toBe('processed');
      expect(sink.to('witness@example.com')).toHaveLength(1);
      expect(sink.to('cancelled@example.com')).toHaveLength(0);
      expect(await status(id)).toBe('cancelled');
    });
  });
}
