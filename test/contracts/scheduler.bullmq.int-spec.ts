import { SystemClock } from '@deals/kernel';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { BullmqScheduler } from '@deals/adapters/scheduler/bullmq/bullmq-scheduler.adapter';
import { schedulerContract } from '@deals/testing/contracts/scheduler.contract';
import { hasRedisServer, startRedisServer } from '../support/redis-server';

const QUEUE = 'contract-jobs';
const source = hasRedisServer() ? 'redis-server' : process.env.REDIS_URL ? 'REDIS_URL' : undefined;

if (!source) {
  const reason = 'no redis-server binary on PATH and REDIS_URL is unset';
  describe.skip(`Scheduler contract: bullmq — skipped: ${reason}`, () => {
    it('needs Redis', () => undefined);
  });
} else {
  let url = process.env.REDIS_URL ?? '';
  let stopServer: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    if (source !== 'redis-server') return;
    const server = await startRedisServer();
    url = server.url;
    stopServer = server.stop;
  });
  afterAll(async () => stopServer?.());

  schedulerContract(`bullmq (${source})`, async () => {
    // A prefix per test: no test sees another's jobs, even on a shared REDIS_URL.
    const prefix = `contract-${randomUUID()}`;
    const scheduler = new BullmqScheduler({ url, prefix, queueName: QUEUE, clock: new SystemClock() });
    return {
      scheduler,
      cleanup: async () => {
        await scheduler.close();
        const queue = new Queue(QUEUE, { connection: { url }, prefix });
        await queue.obliterate({ force: true });
        await queue.close();
      },
    };
  });
}
