import type { FastifyReply } from 'fastify';
import { AuthenticatedRequest, CounterFactory, memoryCounters, RequestLimits, RequestLimitSettings } from '@deals/wire';
import { SecretCheckThrottle, TooSoon } from '@deals/partner-site/http/secret-check-throttle';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { hasRedisServer, startRedisServer } from '../support/redis-server';

const source = hasRedisServer() ? 'redis-server' : process.env.REDIS_URL ? 'REDIS_URL' : undefined;
const settings = { partnerPerMinute: 100, userTokenPerMinute: 100, failuresPerAddress: 10, failuresPerIdentity: 10 };
/** Ten minutes: the time a test's own steps take on the wall clock is nothing beside it. */
const WINDOW_SECONDS = 600;
const MINUTE = 60_000;

/** A counter store, and its time moved forward: the windows end by it, not by the wall clock. */
interface CounterStore {
  counters: CounterFactory;
  elapse(ms: number): Promise<void>;
  /** Request budgets counted in this store. */
  limits(settings: RequestLimitSettings): RequestLimits;
}

/**
 * The counters of both stores, with windows of ten minutes: a fixed window ends ten minutes after
 * the first count, a sliding one ten minutes after the last. `fakeTimers`: the store keeps time
 * by this process's clock, which jest's fake timers move.
 */
function countersContract(name: string, make: () => CounterStore, { fakeTimers = false } = {}) {
  describe(`request counters: ${name}`, () => {
    if (fakeTimers) {
      beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] }));
      afterEach(() => jest.useRealTimers());
    }

    it('forgets a fixed-window key after its first count, a sliding one after its last', async () => {
      const { counters, elapse } = make();
      const prefix = randomUUID();
      const fixed = counters({ keyPrefix: `${prefix}-fixed`, points: Number.MAX_SAFE_INTEGER, duration: WINDOW_SECONDS });
      const sliding = counters({
        keyPrefix: `${prefix}-sliding`,
        points: Number.MAX_SAFE_INTEGER,
        duration: WINDOW_SECONDS,
        sliding: true,
      });
      for (const counter of [fixed, sliding]) await counter.consume('k');
      await elapse(6 * MINUTE);
      expect((await fixed.consume('k')).consumedPoints).toBe(2);
      expect((await sliding.consume('k')).consumedPoints).toBe(2);
      await elapse(6 * MINUTE);
      // 12 minutes after the first count, 6 after the last.
      expect((await fixed.consume('k')).consumedPoints).toBe(1);
      expect((await sliding.consume('k')).consumedPoints).toBe(3);
      await elapse(11.5 * MINUTE);
      expect(await sliding.get('k')).toBeNull();
    });

    it('counts a sliding key exactly when counted at once', async () => {
      const sliding = make().counters({ keyPrefix: randomUUID(), points: Number.MAX_SAFE_INTEGER, duration: 60, sliding: true });
      const counts = (await Promise.all(Array.from({ length: 50 }, () => sliding.consume('k')))).map((r) => r.consumedPoints);
      expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect((await sliding.get('k'))?.consumedPoints).toBe(50);
    });

    it("spends none of the partner's budget on a token's calls its own budget refuses, counted at once", async () => {
      const limits = make().limits({ ...settings, partnerPerMinute: 30, userTokenPerMinute: 10 });
      const partner = { id: randomUUID(), name: 'p', role: 'partner' as const, requestsPerMinute: null, livemode: true };
      const reply = { header: () => reply } as unknown as FastifyReply;
      const call = (request: Partial<AuthenticatedRequest>) => limits.spend(request as AuthenticatedRequest, reply);
      const asToken = (userId: string) => ({
        partner,
        userToken: { userId, scope: 'all' as const, access: ['read' as const], expiresAt: '' },
      });
      // 100 calls of one user's tokens at once: 10 let through, the partner's budget spent by those alone.
      const flood = await Promise.all(Array.from({ length: 100 }, () => call(asToken('u-1'))));
      expect(flood.filter((refusal) => refusal === null)).toHaveLength(10);
      expect((await limits.partnerWindow(partner.id)).requests).toBe(10);
      // The partner spends the rest; then another user's token is refused by the partner's budget and keeps its own.
      const own = await Promise.all(Array.from({ length: 25 }, () => call({ partner })));
      expect(own.filter((refusal) => refusal === null)).toHaveLength(20);
      const refused = [];
      for (let i = 0; i < 12; i++) refused.push(await call(asToken('u-2')));
      expect(refused.every((refusal) => refusal !== null && !refusal.message.includes(partner.id))).toBe(true);
      // Each refused by the partner's budget alone (counted there), its own budget given back each time.
      expect(refused.every((refusal) => !refusal!.message.includes('access tokens of this user'))).toBe(true);
      expect((await limits.partnerWindow(partner.id)).requests).toBe(10 + 25 + 12);
    });

    it("leaves a user's budget whole after a burst of its tokens' calls that a spent partner's budget refuses, counted at once", async () => {
      const limits = make().limits({ ...settings, partnerPerMinute: 5, userTokenPerMinute: 10 });
      const spentPartner = { id: randomUUID(), name: 'p', role: 'partner' as const, requestsPerMinute: null, livemode: true };
      const reply = { header: () => reply } as unknown as FastifyReply;
      const call = (request: Partial<AuthenticatedRequest>) => limits.spend(request as AuthenticatedRequest, reply);
      const userToken = { userId: randomUUID(), scope: 'all' as const, access: ['read' as const], expiresAt: '' };
      for (let i = 0; i < 5; i++) expect(await call({ partner: spentPartner })).toBeNull();
      // 40 calls of one user's tokens at once: every one refused, none served.
      const burst = await Promise.all(Array.from({ length: 40 }, () => call({ partner: spentPartner, userToken })));
      expect(burst.every((refusal) => refusal !== null)).toBe(true);
      // None of them spent the user's budget: with a partner that has room, all 10 of its calls pass.
      const roomy = { ...spentPartner, id: randomUUID(), requestsPerMinute: 100 };
      const after = [];
      for (let i = 0; i < 11; i++) after.push(await call({ partner: roomy, userToken }));
      expect(after.map((refusal) => refusal === null)).toEqual([...Array(10).fill(true), false]);
    });

    it("keeps the site throttle's count of an account while attempts keep coming, and forgets it a window after the last", async () => {
      const { counters, elapse } = make();
      const throttle = new SecretCheckThrottle(counters, { windowSeconds: WINDOW_SECONDS });
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
      await elapse(6 * MINUTE);
      expect(await wrong()).toBe(false);
      await elapse(6 * MINUTE);
      // Past the first attempt's window, within the last's: the fourth makes the account wait.
      expect(await wrong()).toBeInstanceOf(TooSoon);
      // Left alone for a window (and the wait), the account starts afresh.
      await elapse(13 * MINUTE);
      expect(await wrong()).toBe(false);
    });
  });
}

countersContract(
  'in memory',
  () => ({
    counters: memoryCounters,
    elapse: async (ms) => void jest.advanceTimersByTime(ms),
    limits: (limitSettings) => RequestLimits.inMemory(limitSettings),
  }),
  {
    fakeTimers: true,
  },
);

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

  // A prefix per run: nothing is shared with another run on a shared REDIS_URL. Redis keeps its own
  // time: the keys' time to live is shortened as the time that passes would.
  countersContract(`Redis (${source})`, () => {
    const prefix = `counters-${randomUUID()}`;
    return {
      counters: RequestLimits.onRedis(settings, client, prefix).counters,
      limits: (limitSettings: RequestLimitSettings) => RequestLimits.onRedis(limitSettings, client, prefix),
      elapse: async (ms) => {
        for (const key of await client.keys(`${prefix}:*`)) {
          const left = await client.pttl(key);
          if (left < 0) continue; // no expiry, or gone
          if (left > ms) await client.pexpire(key, left - ms);
          else await client.del(key);
        }
      },
    };
  });
}
