/**
 * Several workers keeping the views of the distributed mode: how fast one worker, then two, bring
 * every view from nothing up to a log of purchases, each worker held to a CPU budget of its own
 * ({@link CPU}, `WORKERS_CPU` to change; a cgroup v1 quota, as the distributed bench holds its
 * processes), the views divided between the two by their leases.
 *
 * Setup: a database made for the run (`POSTGRES_BENCH_URL`, default the machine's own), Redis
 * (`REDIS_BENCH_URL`) under a prefix of the run's own; the purchases bench's {@link MANY_DEALS}
 * deals, {@link BUYERS} users with a stored card and {@link BACKLOG} purchases on the 200 deals
 * (`--quick`: a third), made through the built API with a worker keeping the views. Then every
 * view is emptied (rows, checkpoints, leases), and that database is the template of each trial's
 * copy (`CREATE DATABASE … TEMPLATE`), so every trial folds the same log from nothing.
 *
 * Trials alternate one worker and two ({@link PAIRS} pairs): the workers start together, each in
 * its group; the clock starts once all of them hold their leases (`view_keepers`: booted) and stops
 * when every view's active checkpoint reaches the head of the log. Figures: events of the log a
 * second brought into the views, the median of each configuration's trials, and the workers' CPU
 * over the same time.
 */
import { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { PostgresEventStore } from '@deals/adapters';
import { benchDeals, makeBuyers, MANY_DEALS, purchaseBodies } from './purchases.bench';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { CpuGroups, cpuGroupsUnavailable } from './support/cpu-groups';
import { distributedEnv, startService } from './support/distributed-service';
import { runLoad } from './support/load';
import { startBuilt, WORKER_SCRIPT } from './support/service-processes';
import { BENCH_POSTGRES as PG, databaseUrl, deleteRedisKeys } from './support/bench-servers';
import { withTempDir } from './support/temp-dir';

/** Each worker's quota, in CPUs. */
const CPU = Number(process.env.WORKERS_CPU ?? 0.25);
const BUYERS = 200;
const BACKLOG = { full: 6_000, quick: 2_000 };
const PAIRS = { full: 2, quick: 1 };
const CONNECTIONS = 50;
/** A trial whose views are not all at the head by then fails the bench. */
const CATCH_UP_LIMIT_MS = 600_000;

export async function workersBench(options: BenchOptions): Promise<BenchRow[]> {
  const unavailable = cpuGroupsUnavailable();
  if (unavailable) {
    process.stderr.write(`workers bench skipped: ${unavailable}\n`);
    return [];
  }
  const run = `deals_bench_workers_${randomUUID().slice(0, 8)}`;
  const admin = new Client({ connectionString: PG });
  await admin.connect();
  const groups = new CpuGroups(run.replace(/_/g, '-'));
  const databases: string[] = [];
  const makeDatabase = async (name: string, template?: string) => {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
    databases.push(name);
    return name;
  };
  groups.onAbort.push(() => {
    for (const name of databases) void admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
  try {
    return await withTempDir('workers', async (dataDir) => {
      const base = await makeDatabase(`${run}_base`);
      const env = (database: string, prefix: string) => distributedEnv(dataDir, database, prefix);
      const baseEnv = env(base, `${run}-base`);
      const deals = benchDeals(new Date(), MANY_DEALS);
      const many = deals.map((d) => ({ id: d.id, price: d.current_price }));
      const backlog = options.quick ? BACKLOG.quick : BACKLOG.full;

      // The users, their cards, the catalogue and the purchases, with a worker keeping the views.
      const started: ChildProcess[] = [];
      const { apiKey, apis, ca } = await startService(baseEnv, { partner: 'Workers bench', deals, started });
      const buyers = await makeBuyers(apis[0].origin, ca, apiKey, BUYERS);
      const made = await runLoad({
        origin: apis[0].origin,
        paths: [`/purchases?api_key=${apiKey}`],
        connections: CONNECTIONS,
        ca,
        durationSec: 0,
        amount: backlog,
        post: { template: '{item}', items: purchaseBodies(buyers, many, many[0], 'many') },
      });
      for (const child of started.reverse()) await groups.stop(child);
      if (made.ok < backlog * 0.99)
        throw new Error(
          `the backlog: ${made.ok} purchases of ${backlog} answered (${JSON.stringify(made.statuses)}; ${made.failureSamples.join(' | ')})`,
        );
      const probe = new Client({ connectionString: databaseUrl(base) });
      await probe.connect();
      const events = (await probe.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0].n;
      // Every view emptied: each trial brings them from nothing to the head of the log.
      await probe.query(`DO $$ DECLARE t text; BEGIN
           FOR t IN SELECT quote_ident(tablename) FROM pg_tables WHERE tablename LIKE 'view\\_\\_%' LOOP EXECUTE 'TRUNCATE ' || t; END LOOP;
         END $$;
         DELETE FROM view_checkpoints; DELETE FROM view_leases; DELETE FROM view_keepers;`);
      await probe.end();

      const trials: Record<1 | 2, Array<{ sec: number; cpuSec: number }>> = { 1: [], 2: [] };
      const pairs = options.quick ? PAIRS.quick : PAIRS.full;
      for (let pair = 0; pair < pairs; pair++)
        for (const count of [1, 2] as const) {
          const name = await makeDatabase(`${run}_t${pair}_${count}`, base);
          trials[count].push(await catchUp(groups, env(name, `${run}-t${pair}-${count}`), databaseUrl(name), count));
          await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
          databases.splice(databases.indexOf(name), 1);
        }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const one = median(trials[1].map((t) => t.sec));
      const two = median(trials[2].map((t) => t.sec));
      const notes = [
        `a log of ${events} events (${backlog} purchases on ${MANY_DEALS} deals, ${BUYERS} users and cards, the catalogue), each worker at ${CPU} CPU; ` +
          `trials one worker / two: ${trials[1].map((t) => t.sec.toFixed(1)).join(', ')} s / ${trials[2].map((t) => t.sec.toFixed(1)).join(', ')} s; ` +
          `workers' CPU ${median(trials[1].map((t) => t.cpuSec)).toFixed(1)} s / ${median(trials[2].map((t) => t.cpuSec)).toFixed(1)} s`,
      ];
      return [
        row('views folded from nothing, two workers', events / two, 'events/s', `one worker, ${CPU} CPU each`, events / one, {
          aim: { min: 1.5 },
          notes,
        }),
      ];
    });
  } finally {
    groups.close();
    for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    await deleteRedisKeys(run);
  }
}

/** Starts `count` workers on the database, each held to {@link CPU}; seconds from all holding leases to every view at the head. */
async function catchUp(
  groups: CpuGroups,
  env: Record<string, string>,
  url: string,
  count: number,
): Promise<{ sec: number; cpuSec: number }> {
  const probe = new Client({ connectionString: url });
  await probe.connect();
  const children: ChildProcess[] = [];
  try {
    const held = Array.from({ length: count }, (_, i) => {
      const group = groups.group(`${env.REDIS_PREFIX}-w${i}`);
      group.setCpus(CPU);
      children.push(startBuilt(WORKER_SCRIPT, env, `worker-${i}`, { group: { groups, group } }));
      return group;
    });
    for (;;) {
      const { rows } = await probe
        .query<{ n: number }>(`SELECT count(*)::int AS n FROM view_keepers WHERE seen_until > clock_timestamp()`)
        .catch(() => ({ rows: [{ n: 0 }] }));
      if (rows[0].n >= count) break;
      await sleep(10);
    }
    const t0 = performance.now();
    const before = held.map((g) => g.sample().usageNs);
    const deadline = Date.now() + CATCH_UP_LIMIT_MS;
    const log = new PostgresEventStore(url);
    const head = await log.head();
    await log.close();
    for (;;) {
      const { rows } = await probe.query<{ behind: number }>(
        `SELECT count(*)::int AS behind FROM view_generations g
           LEFT JOIN view_checkpoints c ON c.name = '"view__' || g.collection || '__' || g.generation || '"'
          WHERE c.position IS NULL OR c.position < $1`,
        [head],
      );
      if (rows[0].behind === 0) break;
      if (Date.now() > deadline)
        throw new Error(`${count} worker(s): ${rows[0].behind} views still behind ${head} after ${CATCH_UP_LIMIT_MS} ms`);
      await sleep(20);
    }
    const sec = (performance.now() - t0) / 1000;
    const cpuSec = held.reduce((n, g, i) => n + (g.sample().usageNs - before[i]), 0) / 1e9;
    return { sec, cpuSec };
  } finally {
    for (const child of children) await groups.stop(child);
    await probe.end();
  }
}
