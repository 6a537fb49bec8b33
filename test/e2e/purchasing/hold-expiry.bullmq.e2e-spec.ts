import { EventStore, ManualClock, Scheduler } from '@deals/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { Queue } from 'bullmq';
import { ReleaseExpiredHold } from '@deals/purchasing/commands/release-expired-hold/release-expired-hold.command';
import { randomUUID } from 'node:crypto';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { hasRedisServer, startRedisServer } from '../../support/redis-server';
import { tempDir } from '../../support/temp-dir';

/** The BullMQ scheduler's queue (libs/adapters/src/scheduler/bullmq/bullmq-scheduler.adapter.ts). */
const QUEUE = 'scheduled-jobs';
const HOLD_TTL_MS = 5 * 60_000;
const source = hasRedisServer() ? 'redis-server' : process.env.REDIS_URL ? 'REDIS_URL' : undefined;

if (!source) {
  const reason = 'no redis-server binary on PATH and REDIS_URL is unset';
  describe.skip(`hold expiry on BullMQ — skipped: ${reason}`, () => {
    it('needs Redis', () => undefined);
  });
} else {
  describe(`hold expiry on BullMQ (${source})`, () => {
    let url = process.env.REDIS_URL ?? '';
    let stopServer: (() => Promise<void>) | undefined;
    const prefixes: string[] = [];

    beforeAll(async () => {
      if (source !== 'redis-server') return;
      const server = await startRedisServer();
      url = server.url;
      stopServer = server.stop;
    });
    afterAll(async () => {
      // On a shared REDIS_URL, leave nothing behind.
      for (const prefix of prefixes) {
        const queue = new Queue(QUEUE, { connection: { url }, prefix });
        await queue.obliterate({ force: true }).catch(() => undefined);
        await queue.close();
      }
      await stopServer?.();
    });

    const newPrefix = () => {
      const prefix = `hold-expiry-${randomUUID()}`;
      prefixes.push(prefix);
      return prefix;
    };

    async function setUp(api: TestApi) {
      const apiKey = (await api.createPartner()).apiKey;
      await api.importRegions([chicago]);
      await api.importDeals([{ ...spaDay, quantity: 5, max_per_user: undefined }]);
      return apiKey;
    }

    it('the release-hold job, once due, gives the units of an expired hold back', async () => {
      const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
      const api = await TestApi.start({ clock, env: { REDIS_URL: url, REDIS_PREFIX: newPrefix() } });
      try {
        const apiKey = await setUp(api);
        const dealId = spaDay.id;
        const numLeft = async () => (await api.call('GET', `/deals/${dealId}`, { apiKey })).body.deal.num_left;

        const reserved = await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: dealId, num_bought: 2 } });
        expect(reserved.status).toBe(200);
        const purchaseId: string = reserved.body.purchase.id;
        expect(await numLeft()).toBe(3);

        // Past the hold's expiry by the (manual) clock; then the job, due one real second from now.
        clock.advance(HOLD_TTL_MS + 1000);
        await api.get(Scheduler).schedule({
          id: `release-hold-${purchaseId}`,
          kind: 'release-hold',
          runAt: new Date(clock.now().getTime() + 1000),
          data: { dealId, holdId: purchaseId },
        });

        const releasedByJob = async () => {
          const events = await api.get(EventStore).readStream(`inventory-${dealId}`);
          return events.some(
            (e) =>
              e.type === 'UnitsReleased' &&
              (e.data as { holdId: string; reason: string }).holdId === purchaseId &&
              (e.data as { reason: string }).reason === 'expired',
          );
        };
        expect(await eventually(releasedByJob, (released) => released)).toBe(true);
        expect(await eventually(numLeft, (left) => left === 5)).toBe(5);

        const released = (await api.get(EventStore).readStream(`inventory-${dealId}`)).filter((e) => e.type === 'UnitsReleased');
        // The release names the hold's expiry (five minutes after the clock's 12:00).
        expect(released.map((e) => e.data)).toEqual([
          { dealId, holdId: purchaseId, quantity: 2, expiresAt: '2026-06-15T12:05:00.000Z', reason: 'expired' },
        ]);
      } finally {
        await api.close();
      }
    }, 60_000);

    it('a restart re-arms the jobs of live holds, and not those of holds released already', async () => {
      const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
      const env = { REDIS_URL: url, REDIS_PREFIX: newPrefix() };
      const dir = tempDir('hold-expiry');
      const jobs = new Queue(QUEUE, { connection: { url }, prefix: env.REDIS_PREFIX });
      let running: TestApi | undefined = await TestApi.start({ clock, env, dataDir: dir.path });
      try {
        const apiKey = await setUp(running);
        // A reservation that lapsed and whose hold was released: it reads released, and its job
        // must not come back at every start.
        const lapsed: string = (await running.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: spaDay.id, num_bought: 1 } }))
          .body.purchase.id;
        clock.advance(HOLD_TTL_MS + 1000);
        await running.get(CommandBus).execute(new ReleaseExpiredHold(spaDay.id, lapsed));
        await (await jobs.getJob(`release-hold-${lapsed}`))?.remove();
        const reserved = await running.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: spaDay.id, num_bought: 1 } });
        expect(reserved.status).toBe(200);
        const purchaseId: string = reserved.body.purchase.id;
        const jobId = `release-hold-${purchaseId}`;
        const stopping = running;
        running = undefined;
        await stopping.stop();

        const armed = await jobs.getJob(jobId);
        expect(armed).toBeDefined();
        expect(armed!.name).toBe('release-hold');
        expect(armed!.data).toEqual({ dealId: spaDay.id, holdId: purchaseId });
        expect(await armed!.getState()).toBe('delayed');

        // The job is lost (a Redis flush, a failover without persistence...).
        await armed!.remove();
        expect(await jobs.getJob(jobId)).toBeUndefined();

        running = await TestApi.start({ clock, env, dataDir: dir.path });
        const rearmed = await jobs.getJob(jobId);
        expect(rearmed).toBeDefined();
        expect(rearmed!.name).toBe('release-hold');
        expect(rearmed!.data).toEqual({ dealId: spaDay.id, holdId: purchaseId });
        expect(await rearmed!.getState()).toBe('delayed');
        // Armed for the hold's expiry: five minutes from the reservation, by the unchanged clock.
        expect(rearmed!.opts.delay).toBe(HOLD_TTL_MS);
        expect((await running.call('GET', `/purchases/${lapsed}`, { apiKey })).body.purchase.fulfillment_state).toBe('released');
        expect(await jobs.getJob(`release-hold-${lapsed}`)).toBeUndefined();
      } finally {
        await running?.stop();
        await jobs.close();
        dir.remove();
      }
    });
  });
}
