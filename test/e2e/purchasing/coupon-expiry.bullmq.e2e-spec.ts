import { EventStore, ManualClock } from '@deals/kernel';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { hasRedisServer, startRedisServer } from '../../support/redis-server';

/** The BullMQ scheduler's queue (libs/adapters/src/scheduler/bullmq/bullmq-scheduler.adapter.ts). */
const QUEUE = 'scheduled-jobs';
const source = hasRedisServer() ? 'redis-server' : process.env.REDIS_URL ? 'REDIS_URL' : undefined;

if (!source) {
  const reason = 'no redis-server binary on PATH and REDIS_URL is unset';
  describe.skip(`coupon expiry sweep on BullMQ — skipped: ${reason}`, () => {
    it('needs Redis', () => undefined);
  });
} else {
  describe(`coupon expiry sweep on BullMQ (${source})`, () => {
    let url = process.env.REDIS_URL ?? '';
    let stopServer: (() => Promise<void>) | undefined;
    const prefix = `coupon-expiry-${randomUUID()}`;
    beforeAll(async () => {
      if (source !== 'redis-server') return;
      const server = await startRedisServer();
      url = server.url;
      stopServer = server.stop;
    });
    afterAll(async () => {
      const queue = new Queue(QUEUE, { connection: { url }, prefix });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await stopServer?.();
    });

    it('arms its next sweep from the running one: BullMQ keeps it, and a sweep after the start records the expiry', async () => {
      const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
      const api = await TestApi.start({ clock, env: { REDIS_URL: url, REDIS_PREFIX: prefix, COUPON_EXPIRY_SWEEP_MS: '200' } });
      try {
        const apiKey = (await api.createPartner()).apiKey;
        await api.importRegions([chicago]);
        await api.importDeals([{ ...spaDay, id: 'short-lived', quantity: 5, max_per_user: undefined, expires_at: '2026-06-15T12:02:00Z' }]);
        const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'bullmq@example.com' } })).body.user_id;
        const id = (await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: 'short-lived', num_bought: 1 } })).body.purchase
          .id;
        const couponId = (await api.call('PUT', `/purchases/${id}/claim`, { apiKey, body: { user_id: userId } })).body.purchase.coupons[0]
          .id;
        // The start's sweep is long over: only one the sweeps armed since can record this.
        clock.set('2026-06-15T12:05:00Z');
        const expired = async () => (await api.get(EventStore).readStream(`coupon-${couponId}`)).filter((e) => e.type === 'CouponExpired');
        // A later sweep records it.
        await eventually(expired, (events) => events.length > 0);
        expect((await expired()).map((e) => e.data)).toEqual([{ couponId, expiredAt: '2026-06-15T12:02:00.000Z' }]);
      } finally {
        await api.close();
      }
    }, 60_000);
  });
}
