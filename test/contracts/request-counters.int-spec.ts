import { CounterFactory, memoryCounters, RequestLimits } from '@deals/wire';
import { SecretCheckThrottle, TooSoon } from '@deals/partner-site/http/secret-check-throttle';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { hasRedisServer, startRedisServer } from '../support/redis-server';

const source = hasRedisServer() ? 'redis-server' : process.env.REDIS_URL ? 'REDIS_URL' : undefined;
const settings = { partnerPerMinute: 100, userTokenPerMinute: 100, failuresPerAddress: 10, failuresPerIdentity: 10 };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The counters of both stores, with windows of two seconds (Redis expires keys in whole seconds):
 * a fixed window ends two seconds after the first count, a sliding one two seconds after the last.
 */
function countersContract(name: string, make: () => CounterFactory) {
  describe(`request counters: ${name}`, () => {
    it('forgets a fixed-window key after its first count, a sliding one after its last', async () => {
      const counters = make();
      const prefix = randomUUID();
      const fixed = counters({ keyPrefix: `${prefix}-fixed`, points: Number.MAX_SAFE_INTEGER, duration: 2 });
      const sliding = counters({ keyPrefix: `${prefix}-sliding`, points: Number.MAX_SAFE_INTEGER, duration: 2, sliding: true });
      for (const counter of [fixed, sliding]) await counter.consume('k');
      await pause(1200);
      expect((await fixed.consume('k')).consumedPoints).toBe(2);
      expect((await sliding.consume('k')).consumedPoints).toBe(2);
      await pause(1200);
      // 2.4 s after the first count, 1.2 s after the last.
      expect((await fixed.consume('k')).consumedPoints).toBe(1);
      expect((await sliding.consume('k')).consumedPoints).toBe(3);
      await pause(2300);
      expect(await sliding.get('k')).toBeNull();
    });

    it('counts a sliding key exactly when counted at once', async () => {
      const sliding = make()({ keyPrefix: randomUUID(), points: Number.MAX_SAFE_INTEGER, duration: 60, sliding: true });
      const counts = (await Promise.all(Array.from({ length: 50 }, () => sliding.consume('k')))).map((r) => r.consumedPoints);
      expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect((await sliding.get('k'))?.consumedPoints).toBe(50);
    });

    it("keeps the site throttle's count of an account while attempts keep coming, and forgets it a window after the last", async () => {
      const throttle = new SecretCheckThrottle(make(), { windowSeconds: 2 });
      const account = randomUUID().replace(/-/g, '').slice(0, 24);
      let n = 0;
      const wrong = () =>
        throttle.attempt(
          `10.9.0.${++n}`,
          account,
          async () => false,
          (ok) => ok,
        );
      expect([await wrong(), await wrong()]).toEqual([false, false]);
      await pause(1200);
      expect(await wrong()).toBe(false);
      await pause(1200);
      // Past the first attempt's window, within the last's: the fourth makes the account wait.
      expect(await wrong()).toBeInstanceOf(TooSoon);
      // Left alone for a window (and the wait), the account starts afresh.
      await pause(2600);
      expect(await wrong()).toBe(false);
    });
  });
}

countersContract('in memory', () => memoryCounters);

if (!source) {
  const reason = 'no redis-server binary on PATH and REDIS_URL is unset';
  describe.skip(`request counters: Redis — skipped: ${reason}`, () => {
    it('needs Redis', () => undefined);
  });
} else {
  let client: Redis;
  let stopServer: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    let url = process.env.REDIS_URL ?? '';
    if (source === 'redis-server') {
      const server = await startRedisServer();
      url = server.url;
      stopServer = server.stop;
    }
    client = new Redis(url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    await client?.quit();
    await stopServer?.();
  });

  // A prefix per run: nothing is shared with another run on a shared REDIS_URL.
  countersContract(`Redis (${source})`, () => RequestLimits.onRedis(settings, client, `counters-${randomUUID()}`).counters);
}
