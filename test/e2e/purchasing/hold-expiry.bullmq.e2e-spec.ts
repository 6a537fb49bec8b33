import { EventStore, ManualClock, Scheduler } from '@deals/kernel';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { hasRedisServer, startRedisServer } from '../../support/redis-server';
import { tempDir } from '../../support/temp-dir';

/** The BullMQ scheduler's queue (libs/adapters/src/scheduler/bullmq/bullmq-scheduler.adapter.ts). */
const QUEUE = 'scheduled-jobs';
const HOLD_TTL_MS = 5 * 60_000;
/** The holds' sweep: its job's kind and its one id. */
const SWEEP = 'release-due-holds';
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

    it('the sweep, once due, gives the units of an expired hold back', async () => {
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

        // Past the hold's expiry by the (manual) clock; then the sweep, due one real second from now.
        clock.advance(HOLD_TTL_MS + 1000);
        await api.get(Scheduler).schedule({ id: SWEEP, kind: SWEEP, runAt: new Date(clock.now().getTime() + 1000), data: {} });

        const releasedBySweep = async () => {
          const events = await api.get(EventStore).readStream(`inventory-${dealId}`);
          return events.some(
            (e) =>
              e.type === 'UnitsReleased' &&
              (e.data as { holdId: string; reason: string }).holdId === purchaseId &&
              (e.data as { reason: string }).reason === 'expired',
          );
        };
        expect(await eventually(releasedBySweep, (released) => released)).toBe(true);
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

    it('arms no job a hold; a start sweeps at once, releasing a hold that lapsed while the service was down, and arms the next sweep', async () => {
      const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
      const env = { REDIS_URL: url, REDIS_PREFIX: newPrefix() };
      const dir = tempDir('hold-expiry');
      const jobs = new Queue(QUEUE, { connection: { url }, prefix: env.REDIS_PREFIX });
      let running: TestApi | undefined = await TestApi.start({ clock, env, dataDir: dir.path });
      try {
        const apiKey = await setUp(running);
        const reserved = await running.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: spaDay.id, num_bought: 1 } });
        expect(reserved.status).toBe(200);
        const purchaseId: string = reserved.body.purchase.id;
        // No job of the hold's own: the sweep, armed one hold's life on by its run at the start (the
        // hold's expiry, were it run after the reservation: the same instant by the unmoved clock).
        const delayed = await eventually(
          () => jobs.getJobs(['delayed']),
          (found) => found.some((job) => job.id === SWEEP),
        );
        expect(delayed.filter((job) => JSON.stringify(job.data).includes(purchaseId))).toEqual([]);
        expect(delayed.filter((job) => job.id === SWEEP).map((job) => [job.name, job.opts.delay])).toEqual([[SWEEP, HOLD_TTL_MS]]);
        const stopping = running;
        running = undefined;
        await stopping.stop();

        // Down past the hold's expiry; at the start, the sweep runs at once and releases it.
        clock.advance(HOLD_TTL_MS + 1000);
        const restarted = Date.now();
        running = await TestApi.start({ clock, env, dataDir: dir.path });
        const api = running;
        const releases = async () =>
          (await api.get(EventStore).readStream(`inventory-${spaDay.id}`)).filter((e) => e.type === 'UnitsReleased').map((e) => e.data);
        expect(await eventually(releases, (found) => found.length > 0)).toEqual([
          { dealId: spaDay.id, holdId: purchaseId, quantity: 1, expiresAt: '2026-06-15T12:05:00.000Z', reason: 'expired' },
        ]);
        // Armed again by that run (the job of the start's own, due at once, runs first), one hold's
        // life on: no hold is open now.
        const next = async () => {
          const job = await jobs.getJob(SWEEP);
          return job && job.timestamp >= restarted ? [await job.getState(), job.opts.delay] : null;
        };
        expect(await eventually(next, (found) => found?.[0] === 'delayed')).toEqual(['delayed', HOLD_TTL_MS]);
      } finally {
        await running?.stop();
        await jobs.close();
        dir.remove();
      }
    });
  });
}
