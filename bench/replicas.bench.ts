/**
 * Stored-card purchases per second on one hot deal through two API replicas and a worker on
 * PostgreSQL and Redis, beside the embedded mode's rate for the same load in the same run.
 *
 * Setup (distributed): a database made for the run on `POSTGRES_BENCH_URL` (default: the machine's
 * server), dropped after; the machine's Redis (`REDIS_BENCH_URL`, default redis://127.0.0.1:6379)
 * under a prefix of the run's own; one DATA_DIR shared by the processes. The built CLI makes the
 * partner and imports the demo regions and {@link DEALS} daily deals (quantity 1,000,000); the
 * built worker (`dist/apps/worker`) and two built API processes (`dist/apps/api`, RUN_PROJECTIONS
 * off) start; {@link USERS} users with one stored card each are made over HTTPS through the first
 * replica (not measured).
 *
 * Measures: the hot deal's purchases (`POST /purchases`, user n mod {@link USERS}), {@link CONNECTIONS}
 * connections in all, half to each replica (two autocannon children at once), a warm-up then the
 * measured run (each replica's connections buying for users of their own); against: the embedded
 * mode (one process, `startPurchasesApi` of the purchases bench, the same load on its hot deal,
 * {@link CONNECTIONS} connections), measured first in this run, and one replica alone taking the
 * whole load (all users), measured right after the two.
 */
import { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { benchDeals, makeBuyers, measure, purchaseBodies, startPurchasesApi } from './purchases.bench';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { BENCH_POSTGRES as PG, BENCH_REDIS as REDIS } from './support/bench-servers';
import { distributedEnv, startService } from './support/distributed-service';
import { LoadRun, runLoad, summarize } from './support/load';
import { withTempDir } from './support/temp-dir';

const CONNECTIONS = 50;
const USERS = 500;
const DEALS = 3;
/** With REPLICAS_LOG_DIR the processes' output goes to `<dir>/<name>.log` (to see why an answer failed). */
const logDir = process.env.REPLICAS_LOG_DIR;

export async function replicasBench(options: BenchOptions): Promise<BenchRow[]> {
  // The embedded mode first, its own data folder.
  const embedded = await withTempDir('replicas-embedded', async (dataDir) => {
    const session = await startPurchasesApi(dataDir);
    try {
      return (await measure(session, options, 'hot')).summary;
    } finally {
      await session.api.close();
    }
  });

  const name = `deals_replicas_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const admin = new Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const processes: ChildProcess[] = [];
  try {
    return await withTempDir('replicas', async (dataDir) => {
      const env = distributedEnv(dataDir, name, name);
      const deals = benchDeals(new Date(), DEALS);
      const service = await startService(env, { partner: 'Replicas bench', deals, apis: 2, started: processes, logDir });
      const origins = service.apis.map((api) => api.origin);
      const { ca, apiKey: key } = service;
      const hot = deals[deals.length - 1];

      const t0 = performance.now();
      const buyers = await makeBuyers(origins[0], ca, key, USERS);
      const setupSec = (performance.now() - t0) / 1000;
      const items = purchaseBodies(buyers, [], { id: hot.id, price: hot.current_price }, 'hot');
      // Each replica's load buys for users of its own: one user's purchases through both at once
      // would meet the user's charge lock (409) and measure that instead.
      const load = (targets: string[], durationSec: number) =>
        Promise.all(
          targets.map((origin, i) =>
            runLoad({
              origin,
              paths: [`/purchases?api_key=${key}`],
              connections: CONNECTIONS / targets.length,
              ca,
              durationSec,
              post: { template: '{item}', items: items.filter((_, n) => n % targets.length === i) },
            }),
          ),
        );
      // The two runs of a load go at once: their answers add up over one run's time.
      const rateOf = (runs: LoadRun[]) => runs.reduce((n, r) => n + r.ok, 0) / runs[0].durationSec;
      const statusesOf = (runs: LoadRun[]) => runs.map((r) => JSON.stringify(r.statuses)).join(' + ');
      await load(origins, options.httpWarmupSec);
      const two = await load(origins, options.httpDurationSec);
      const one = await load(origins.slice(0, 1), options.httpDurationSec);
      const [twoSummary, oneSummary] = [summarize(two), summarize(one)];
      const conditions =
        `two API replicas and a worker (built, from dist/) on PostgreSQL ${new URL(PG).host} (a database made for the run) and Redis ${REDIS}; ${CONNECTIONS} connections in all, ` +
        `${options.httpWarmupSec} s warm-up through both, then ${options.httpDurationSec} s through both (${CONNECTIONS / 2} connections each, users apart), then ${options.httpDurationSec} s through one; ` +
        `${USERS} users with cards made in ${setupSec.toFixed(1)} s (not measured)`;
      const label = 'POST /purchases, one hot deal, two replicas on PostgreSQL, purchases/s';
      return [
        row(label, rateOf(two), 'purchases/s', `the embedded mode, one process, ${CONNECTIONS} connections`, embedded.okPerSec, {
          limitUnit: 'purchases/s',
          aim: { min: 0.5 },
          notes: [
            conditions,
            `  two replicas: statuses ${statusesOf(two)}; p99 ${twoSummary.p99Ms.toFixed(1)} ms; embedded: ${embedded.okPerSec.toFixed(0)} purchases/s, p99 ${embedded.p99Ms.toFixed(1)} ms`,
          ],
        }),
        row(`${label}, against one`, rateOf(two), 'purchases/s', `one of the replicas alone, ${CONNECTIONS} connections`, rateOf(one), {
          limitUnit: 'purchases/s',
          notes: [`  one replica: statuses ${statusesOf(one)}; p99 ${oneSummary.p99Ms.toFixed(1)} ms`],
        }),
      ];
    });
  } finally {
    for (const child of processes) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
