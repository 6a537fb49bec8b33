/**
 * Where a stored-card purchase's time goes, on the purchases bench's setup (`startPurchasesApi`):
 * wall time of each port call the purchase makes (wrapped on the live instances), the event store's
 * group-commit flushes (synchronous, on the event loop) and the event loop's utilization, plus a V8
 * CPU profile of this process while the load runs. Not part of `npm run bench`.
 *
 *   npm run build && node dist/bench/purchases.profile.js [--mode=hot|many] [--seconds=5] [--connections=50] [--out=<dir>] [--heap] [--keyed]
 *
 * `--heap` also writes a sampling heap profile of the measured run that counts every allocation,
 * including the objects the GC has collected since (what the scavenges pay for), one sample per
 * 16 KB allocated on average. `--keyed` sends every purchase with an `Idempotency-Key` of its own.
 */
import { AccountQueries } from '@deals/accounts';
import { CatalogQueries } from '@deals/catalog';
import { CommandBus } from '@nestjs/cqrs';
import { EventStore, PaymentGateway, Scheduler, ViewProgress, ViewStore } from '@deals/kernel';
import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { BenchOptions } from './support/bench-row';
import { measure, startPurchasesApi } from './purchases.bench';
import { withTempDir } from './support/temp-dir';

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

interface Tally {
  calls: number;
  ms: number;
  /** Sum of a size (batch length) where it applies. */
  items: number;
}

const tallies = new Map<string, Tally>();
let enabled = false;
function add(name: string, ms: number, items = 0) {
  if (!enabled) return;
  const t = tallies.get(name) ?? { calls: 0, ms: 0, items: 0 };
  t.calls++;
  t.ms += ms;
  t.items += items;
  tallies.set(name, t);
}

/** Wraps `object[method]` (async or not) to add its wall time under `name`. */
function wrap(object: object, method: string, name: string, size?: (self: any) => number) {
  const o = object as Record<string, (...a: unknown[]) => unknown>;
  const original = o[method];
  if (typeof original !== 'function') throw new Error(`${name}: no method ${method}`);
  o[method] = function (this: unknown, ...args: unknown[]) {
    const items = size ? size(this) : 0;
    const t0 = performance.now();
    const out = original.apply(this, args);
    if (out && typeof (out as Promise<unknown>).then === 'function') {
      return (out as Promise<unknown>).finally(() => add(name, performance.now() - t0, items));
    }
    add(name, performance.now() - t0, items);
    return out;
  };
}

/** One autocommit insert (one WAL sync) after another on a fresh file in `dir`: the disk's commit rate. */
function rawCommitRate(dir: string, seconds: number): number {
  const db = new Database(join(dir, 'raw-commits.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    insert.run('x'.repeat(500));
    n++;
  }
  db.close();
  return n / ((performance.now() - t0) / 1000);
}

async function main() {
  const mode = arg('mode', 'hot') as 'hot' | 'many';
  const seconds = Number(arg('seconds', '5'));
  const out = resolve(arg('out', '.'));
  mkdirSync(out, { recursive: true });
  await withTempDir('purchases-profile', async (dir) => {
    const commits = rawCommitRate(dir, 2);
    console.log(
      `raw autocommit inserts (1 txn + WAL fsync each) on this disk: ${commits.toFixed(0)}/s = ${(1000 / commits).toFixed(2)} ms each`,
    );
    const session = await startPurchasesApi(dir);
    const { app } = session.api;
    try {
      const store = app.get(EventStore);
      wrap(store, 'appendToStreams', 'EventStore.appendToStreams (a batch or a unit of work, queued → committed)');
      wrap(store, 'readStream', 'EventStore.readStream');
      // The write thread commits (and syncs) off the loop; `answer` is the loop's share of a batch.
      const log = (store as unknown as { inner?: object }).inner ?? store;
      wrap(
        (log as unknown as { writer: object }).writer,
        'answer',
        'EventStore batch answered (on the loop)',
        (self) => self.inFlight?.[0]?.length ?? 0,
      );
      wrap(app.get(PaymentGateway), 'charge', 'PaymentGateway.charge (simulated, own SQLite FULL)');
      wrap(app.get(Scheduler), 'schedule', 'Scheduler.schedule');
      wrap(app.get(Scheduler), 'cancel', 'Scheduler.cancel');
      wrap(app.get(ViewProgress), 'waitFor', 'ViewProgress.waitFor (read-your-writes)');
      wrap(app.get(AccountQueries), 'user', 'AccountQueries.user');
      wrap(app.get(AccountQueries), 'card', 'AccountQueries.card');
      wrap(app.get(CatalogQueries), 'deal', 'CatalogQueries.deal');
      wrap(app.get(CommandBus), 'execute', 'CommandBus.execute (the purchase command, whole)');
      // The server's side of each request: from its headers parsed to its answer handed to the socket.
      (app.getHttpServer() as import('node:http').Server).on('request', (_req, res) => {
        const t0 = performance.now();
        res.on('finish', () => add('HTTP request (server side, headers to answer sent)', performance.now() - t0));
      });
      const views = app.get(ViewStore) as unknown as Record<string, unknown>;
      for (const m of ['find', 'findById', 'count']) wrap(views, m, `ViewStore.${m}`);
      const writer = views.writer as (c: string) => Record<string, unknown>;
      views.writer = function (this: unknown, collection: string) {
        const w = writer.call(this, collection);
        for (const m of Object.keys(Object.getPrototypeOf(w) ?? {}).concat(Object.keys(w))) {
          if (typeof w[m] === 'function' && m !== 'constructor') wrap(w, m, `ViewWriter(${collection}).${m}`);
        }
        return w;
      };
      const options: BenchOptions = {
        quick: true,
        httpDurationSec: seconds,
        httpWarmupSec: 2,
        httpRounds: 1,
        connections: 50,
        appends: 0,
        appendClients: 0,
        rawCommitSec: 0,
      };
      // Warm-up (measure's own), then the measured run with the tallies, loop monitor and CPU profile on.
      const inspector = new Session();
      inspector.connect();
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.setSamplingInterval', { interval: 500 });
      const loop = monitorEventLoopDelay({ resolution: 10 });
      const elu0 = performance.eventLoopUtilization();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      enabled = true;
      loop.enable();
      await inspector.post('Profiler.start');
      const heap = process.argv.includes('--heap');
      if (heap) {
        await inspector.post('HeapProfiler.startSampling', {
          samplingInterval: 16_384,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        });
      }
      const m = await measure(session, options, mode, {
        keyed: process.argv.includes('--keyed'),
        connections: Number(arg('connections', '50')),
      });
      const { profile } = (await inspector.post('Profiler.stop')) as unknown as { profile: unknown };
      const heapProfile = heap ? ((await inspector.post('HeapProfiler.stopSampling')) as unknown as { profile: unknown }).profile : null;
      loop.disable();
      enabled = false;
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const elu = performance.eventLoopUtilization(elu0);
      inspector.disconnect();
      const file = join(out, `purchases-${mode}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      if (heapProfile) writeFileSync(join(out, `purchases-${mode}.heapprofile`), JSON.stringify(heapProfile));
      const [warm, run] = m.runs;
      const purchases = (warm.statuses?.['200'] ?? 0) + (run.statuses?.['200'] ?? 0);
      console.log(
        `mode ${mode}: measured ${m.summary.okPerSec.toFixed(0)} purchases/s, p50 ${m.summary.p50Ms.toFixed(0)} ms, p99 ${m.summary.p99Ms.toFixed(0)} ms; statuses ${JSON.stringify(run.statuses)}`,
      );
      console.log(
        `tallied over warm-up + measured + settle (${(wall / 1000).toFixed(1)} s wall, ${purchases} purchases answered 200): ` +
          `CPU ${((cpu.user + cpu.system) / 1000 / wall).toFixed(2)} cores of this process; event loop utilization ${elu.utilization.toFixed(2)}; ` +
          `loop delay p50 ${(loop.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms`,
      );
      console.log('wall time by call (calls overlap: concurrent purchases):');
      for (const [name, t] of [...tallies.entries()].sort((a, b) => b[1].ms - a[1].ms)) {
        console.log(
          `  ${name.padEnd(58)} ${String(t.calls).padStart(7)} calls ${(t.ms / 1000).toFixed(2).padStart(8)} s  mean ${(t.ms / t.calls).toFixed(2).padStart(7)} ms` +
            `${t.items ? `  mean batch ${(t.items / t.calls).toFixed(1)}` : ''}  per purchase ${(t.calls / Math.max(1, purchases)).toFixed(2)} calls, ${(t.ms / Math.max(1, purchases)).toFixed(2)} ms`,
        );
      }
      console.log(`CPU profile: ${file}`);
    } finally {
      await session.api.close();
    }
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exitCode = 1;
});
