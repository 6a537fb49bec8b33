/**
 * The distributed mode judged as a whole: stored-card purchases through API replicas and a worker
 * on PostgreSQL and Redis, each process held to a CPU budget of its own, against a conventional
 * design (Fastify + PostgreSQL, one transaction with a row lock a purchase) and the embedded mode
 * held to the same budget, with the CPU every process spent on a purchase, PostgreSQL's included,
 * and the transactions and WAL a purchase costs the database.
 *
 * Processes: each in a cgroup v1 `cpu` group of its own with a CFS quota ({@link CPU}, default 0.5
 * CPU, `DISTRIBUTED_CPU` to change; {@link CPU_FOUR}, default 0.3, `DISTRIBUTED_CPU_FOUR`, for the
 * four-replica run; period `DISTRIBUTED_CPU_PERIOD_US`, default 10 ms) and the `cpuacct` group of
 * the same name, whose CPU time is read before and after each measured run. The load generator
 * (autocannon children) runs in a group of its own, not counted and not held. PostgreSQL is not
 * held: its CPU a purchase is the CPU time (/proc/<pid>/schedstat) of its backends connected to the
 * configuration's database, plus its shared processes (WAL writer, checkpointer, background writer,
 * autovacuum), which work for every database: so the server should serve no other load meanwhile
 * (the notes say how many transactions other databases committed). The quotas are set once the
 * setup (users and cards, whose scrypt alone would take minutes under 0.5 CPU) is done and the
 * processes are primed.
 *
 * Configurations, in this order, each with its own data (databases made for the run and dropped;
 * Redis keys under a prefix of the run's own, deleted after):
 * - conventional: `support/conventional-purchase-server.ts` (an RSA certificate like the API's);
 * - embedded: the built API alone (`dist/apps/api`, SQLite in a data folder of its own);
 * - one API replica + the worker (`dist/apps/api` with RUN_PROJECTIONS off, `dist/apps/worker`);
 * - two API replicas + the worker (the same database, the second replica started then);
 * - four API replicas + the worker, every process at {@link CPU_FOUR} (200 deals only).
 * The catalogue is the purchases bench's ({@link MANY_DEALS} daily deals, quantity 1,000,000, no
 * limit a user) and a hot deal of each configuration's own (unsold before it is primed); {@link USERS}
 * users with one stored card each ({@link QUICK_USERS} with `--quick`: their cards' scrypt is most
 * of a setup).
 *
 * Measures, per configuration, {@link CONNECTIONS} connections in all (split evenly over the
 * replicas, each replica's share buying for users of its own, as the replicas bench does), two
 * loads: the hot deal (request n for user n mod {@link USERS}, all on one deal) and 200 deals (deal
 * n mod 200). Every run is a set number of purchases, all answered before it ends (autocannon's
 * `amount`): each load primed with the processes not yet held to their quota, then held: a warm-up
 * (its rate sizes the measured run), the statistics left to settle, ~{@link REWARM_SEC} s of the
 * load again (the pools' connections closed meanwhile), then the measured run: as many purchases
 * as the warm-up's rate makes in {@link measuredSec} s. From it:
 * - purchases/s: 2xx answers ÷ the run's time;
 * - CPU ms a purchase of each process: its group's cpuacct.usage over the run and a
 *   {@link DRAIN_MS} ms drain after it, ÷ the run's 2xx answers; PostgreSQL's the same way;
 * - WAL bytes and writing transactions a purchase over the run: attributed to the configuration's
 *   database by reading the run's WAL back (pg_walinspect, in a database of the run's own), else
 *   server-wide (`pg_current_wal_insert_lsn()`, the transaction id counter);
 * - on the hot deal (the statistics take 10 s to settle: not waited for twice more a
 *   configuration), committed transactions of the configuration's database (`pg_stat_database`)
 *   and WAL syncs (`pg_stat_wal`, server-wide) a purchase, of the measured run and the one right
 *   before it, read {@link STATS_SETTLE_MS} after the load, the idle processes' own rate (measured
 *   beforehand) taken off the quiet time; the bench's own queries run on other databases;
 * - a lone purchase: after the loads, one connection, {@link LONE} purchases one after the other
 *   (on the 200 deals), p50 and p99 latency (not for the two- and four-replica configurations).
 */
import { ChildProcess, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { benchDeals, CONNECTIONS, makeBuyers, MANY_DEALS, purchaseBodies, USERS } from './purchases.bench';
import { BENCH_BUDGETS } from './support/bench-api';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { prepareConventionalDatabase } from './support/conventional-purchase-server';
import { CpuGroup, CpuGroups, DEFAULT_PERIOD_US, GroupSample } from './support/cpu-groups';
import { startCpuMeter } from './support/cpu-meter';
import { httpsGet } from './support/https-get';
import { LoadRun, LoadSummary, runLoad, summarize } from './support/load';
import { localCaCertificate } from './support/local-ca-certificate';
import { idleRate, othersCommitted, PgCounters, PgCpuMeter, PgStats, STATS_SETTLE_MS } from './support/postgres-counters';
import { distributedEnv, startApiProcess, startService, untilServing } from './support/distributed-service';
import { createPartner, freePort, importCatalogue, serviceCertificate, startBuilt, until } from './support/service-processes';
import { BENCH_POSTGRES as PG, databaseUrl, deleteRedisKeys } from './support/bench-servers';
import { ROOT } from './support/source-place';
import { withTempDir } from './support/temp-dir';

/** With DISTRIBUTED_LOG_DIR the processes' output goes to `<dir>/<name>.log`. */
const logDir = process.env.DISTRIBUTED_LOG_DIR;

function cpuSetting(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const cpus = Number(value);
  if (!(cpus > 0 && cpus <= 64)) throw new Error(`${name} must be a number of CPUs such as 0.5, got ${JSON.stringify(value)}`);
  return cpus;
}

/** Each process's quota, in CPUs. */
const CPU = cpuSetting('DISTRIBUTED_CPU', 0.5);
/** Each process's quota in the four-replica run. */
const CPU_FOUR = cpuSetting('DISTRIBUTED_CPU_FOUR', 0.3);
const PERIOD_US = Math.round(cpuSetting('DISTRIBUTED_CPU_PERIOD_US', DEFAULT_PERIOD_US));
/** Sequential purchases of the lone-purchase measurement. */
const LONE = { full: 60, quick: 30 };
/** Users (one stored card each) with `--quick`: 200 requests apart, a user's purchases still never meet its charge lock. */
const QUICK_USERS = 200;
const usersOf = (options: BenchOptions) => (options.quick ? QUICK_USERS : USERS);
const measuredSec = (options: BenchOptions) => (options.quick ? 3 : 6);
/**
 * Every run is of a set number of purchases, each answered before it ends: a run of a set time
 * would answer nothing when the latency under load exceeds it (over a second for a replica at 0.5
 * CPU), and would leave purchases under way when it ends.
 * Purchases of each load through the processes not yet held to their quota (JIT, caches,
 * connections), not measured; then, held, the warm-up, whose rate sizes the measured run.
 */
const primePurchases = (options: BenchOptions) => (options.quick ? 2 : 3) * CONNECTIONS;
/**
 * The 200 deals' prime buys each deal at least twice: the first purchases of a deal since its import
 * write more (the first full run measured 56 kB of WAL a purchase there, against 27 kB later).
 */
const primeOf = (kind: Kind, options: BenchOptions) => Math.max(primePurchases(options), kind === 'many' ? 2 * MANY_DEALS : 0);
const warmupPurchases = (options: BenchOptions) => (options.quick ? 2 : 3) * CONNECTIONS;
/**
 * Right before each measured run, about this long of the same load, not measured: the connection
 * pools' idle connections closed while the statistics settled (pg's pools close them after 10 s),
 * and the measured run should not pay for opening them again.
 */
const REWARM_SEC = 1;
/** Sequential purchases before the lone ones, not measured. */
const LONE_REWARM = 10;
/** After a measured run, before its CPU is read: answers are sent before all of a purchase's work is done (projections, jobs). */
const DRAIN_MS = 1_000;
/** How long the idle processes' own transactions are counted, before the measured runs. */
const IDLE_SAMPLE_MS = 2_000;

/**
 * `DISTRIBUTED_VIEWS=ferretdb`: instead of the configurations above, one API replica + the worker
 * with the views on PostgreSQL, then with them on FerretDB (`MONGO_URL`; a process of its own, in a
 * CPU group of its own under the same quota) over SQLite in a temporary folder, as the tests run it;
 * `ferretdb-postgresql`: over PostgreSQL (a schema in the configuration's own database, so that its
 * SQL counts as PostgreSQL's). Each with a user's purchases list loaded after its lone purchases.
 * Unset (or `postgresql`): the configurations above.
 */
const VIEWS = process.env.DISTRIBUTED_VIEWS || 'postgresql';
if (!['postgresql', 'ferretdb', 'ferretdb-postgresql'].includes(VIEWS))
  throw new Error(`DISTRIBUTED_VIEWS must be postgresql, ferretdb or ferretdb-postgresql, got ${JSON.stringify(VIEWS)}`);
/** The list's load: this many connections, each asking for the first users' purchases in turn, 10 a page. */
const LIST_CONNECTIONS = 10;
const FERRETDB_BACKEND =
  VIEWS === 'ferretdb-postgresql' ? "PostgreSQL (a schema of the configuration's database)" : 'SQLite in a temporary folder';
const LIST_USERS = { full: 100, quick: 50 };

type Kind = 'hot' | 'many';
const KIND_LABEL: Record<Kind, string> = { hot: 'hot deal', many: `${MANY_DEALS} deals` };

interface Target {
  origin: string;
  ca: string;
  /** URL-encoded. */
  apiKey: string;
}

/** What one configuration is measured on. */
interface Configuration {
  name: string;
  targets: Target[];
  /** The processes' groups, by label (`api-1`, `worker`, …). */
  groups: Array<{ label: string; group: CpuGroup }>;
  /** The database's counters; null for the embedded mode. */
  pg: { counters: PgCounters; cpu: PgCpuMeter | null } | null;
  bodies: Partial<Record<Kind, string[]>>;
  kinds: Kind[];
  lone: boolean;
  /** GET paths of a list, loaded after the lone purchases through the first target (none: not measured). */
  list?: string[];
  /** Sets the processes' quotas: called once they are primed (they run without quotas until then). */
  hold: () => void;
}

interface KindResult {
  rate: number;
  /** The measured run's time (the longest of the targets' runs). */
  durationSec: number;
  summary: LoadSummary;
  statuses: string;
  /** The warm-up's rate (it sets the measured run's size). */
  warmRate: number;
  /** CPU ms a purchase, by process label; `postgres` (backends + shared) when measured. */
  cpuMs: Record<string, number>;
  /** Share of the CFS periods in which the process ran out of its quota, by label. */
  throttled: Record<string, number>;
  pgCpu: { backendsMs: number; sharedMs: number; backends: number } | null;
  pg: {
    /** Committed transactions of the database a purchase: read once the statistics settled, so for the hot deal only (null otherwise). */
    xacts: number | null;
    /** Attributed to the configuration's database when pg_walinspect could read the window back; server-wide otherwise. */
    writingXacts: number;
    walBytes: number;
    attributed: boolean;
    /** Of the attributed WAL, full-page images. */
    fpiBytes: number | null;
    /** Server-wide: the WAL position's and the transaction id counter's moves. */
    serverWalBytes: number;
    serverWritingXacts: number;
    attributionError: string | null;
    walSyncs: number | null;
    idleXactsPerSec: number | null;
    othersCommits: number | null;
  } | null;
  otherCores: number | null;
}

interface ConfigurationResult {
  kinds: Partial<Record<Kind, KindResult>>;
  lone: LoadSummary | null;
  /** The list's measured run: latencies, and answers a second. */
  list: { summary: LoadSummary; rate: number } | null;
  /** Seconds its warm-ups, measured runs, waits and lone purchases took. */
  tookSec: number;
}

/** Everything the run made, to be undone. */
interface Run {
  name: string;
  groups: CpuGroups;
  loadgen: CpuGroup;
  admin: Client;
  /** A connection to a database of the run's own holding pg_walinspect, to attribute WAL; null when it could not be made. */
  inspector: Client | null;
  databases: string[];
  options: BenchOptions;
}

/** Rate of several runs at once: their answers over the longest run's time. */
const rateOf = (runs: LoadRun[]) => runs.reduce((n, r) => n + r.ok, 0) / Math.max(...runs.map((r) => r.durationSec));

/**
 * The load through every target at once, `connections` in all split over them (a target takes item
 * n when n mod targets is its index: each buys for users of its own); `amount` purchases in all, split
 * in proportion to the connections, every one answered before the run ends.
 */
function load(run: Run, targets: Target[], items: string[], amount: number, all = CONNECTIONS): Promise<LoadRun[]> {
  const k = targets.length;
  return Promise.all(
    targets.map((target, i) => {
      const connections = Math.floor(all / k) + (i < all % k ? 1 : 0);
      return runLoad(
        {
          origin: target.origin,
          paths: [`/purchases?api_key=${target.apiKey}`],
          connections,
          ca: target.ca,
          durationSec: 0,
          amount: Math.max(connections, Math.round((amount * connections) / all)),
          post: { template: '{item}', items: items.filter((_, n) => n % k === i) },
        },
        { onStart: (pid) => run.loadgen.adopt(pid) },
      );
    }),
  );
}

function checkAnswered(runs: LoadRun[], what: string): void {
  for (const r of runs)
    if (r.ok === 0)
      throw new Error(`${what}: no 2xx (statuses ${JSON.stringify(r.statuses)}, errors ${r.errors}; e.g. ${r.failureSamples.join(' | ')})`);
}

const statusesOf = (runs: LoadRun[]) => {
  const all: Record<string, number> = {};
  for (const r of runs) for (const [status, n] of Object.entries(r.statuses ?? {})) all[status] = (all[status] ?? 0) + n;
  return JSON.stringify(all);
};

/** Warm-ups, then the measured runs, then the lone purchases, of one configuration. */
async function measureConfiguration(run: Run, config: Configuration): Promise<ConfigurationResult> {
  const { options } = run;
  const t0 = performance.now();
  for (const kind of config.kinds) {
    const primed = await load(run, config.targets, config.bodies[kind]!, primeOf(kind, options));
    checkAnswered(primed, `${config.name}, ${KIND_LABEL[kind]}, primed without quotas`);
  }
  config.hold();
  const warmRates: Partial<Record<Kind, number>> = {};
  for (const kind of config.kinds) {
    const warm = await load(run, config.targets, config.bodies[kind]!, warmupPurchases(options));
    checkAnswered(warm, `${config.name}, ${KIND_LABEL[kind]}, warm-up`);
    warmRates[kind] = rateOf(warm);
  }
  // Every backend's statistics flushed, then the idle processes' own transactions a second.
  let stats: PgStats | null = null;
  let idle = { xactsPerSec: 0, walSyncsPerSec: 0 };
  // The statistics settle for 10 s after a load: read for the hot deal only, to keep the bench short.
  const settledKind: Kind | null = config.kinds.includes('hot') ? 'hot' : null;
  if (config.pg && settledKind) {
    await sleep(STATS_SETTLE_MS);
    const quiet = await config.pg.counters.stats();
    await sleep(IDLE_SAMPLE_MS);
    stats = await config.pg.counters.stats();
    idle = idleRate(quiet, stats);
  } else await sleep(DRAIN_MS * 2);

  const kinds: ConfigurationResult['kinds'] = {};
  for (const kind of config.kinds) {
    const amount = Math.max(CONNECTIONS * 4, Math.round(warmRates[kind]! * measuredSec(options)));
    const rewarm = await load(
      run,
      config.targets,
      config.bodies[kind]!,
      Math.max(CONNECTIONS * 2, Math.round(warmRates[kind]! * REWARM_SEC)),
    );
    checkAnswered(rewarm, `${config.name}, ${KIND_LABEL[kind]}, before the measured run`);
    const before = config.groups.map(({ group }) => group.sample());
    const loadgenBefore = run.loadgen.sample();
    const meter = startCpuMeter();
    config.pg?.cpu?.start();
    const instantBefore = config.pg ? await config.pg.counters.instant() : null;
    const runs = await load(run, config.targets, config.bodies[kind]!, amount);
    checkAnswered(runs, `${config.name}, ${KIND_LABEL[kind]}`);
    await sleep(DRAIN_MS);
    const instantAfter = config.pg ? await config.pg.counters.instant() : null;
    const pgCpu = config.pg?.cpu?.stop() ?? null;
    const after = config.groups.map(({ group }) => group.sample());
    const loadgenUsed = run.loadgen.sample().usageNs - loadgenBefore.usageNs;
    const ok = runs.reduce((n, r) => n + r.ok, 0);
    const used = (a: GroupSample, b: GroupSample) => b.usageNs - a.usageNs;
    const groupsNs = after.reduce((n, a, i) => n + used(before[i], a), 0);
    const cpu = meter((groupsNs + loadgenUsed + (pgCpu ? pgCpu.backendsNs + pgCpu.sharedNs : 0)) / 1000);
    const cpuMs: Record<string, number> = {};
    const throttled: Record<string, number> = {};
    config.groups.forEach(({ label }, i) => {
      cpuMs[label] = used(before[i], after[i]) / 1e6 / ok;
      const periods = after[i].periods - before[i].periods;
      throttled[label] = periods > 0 ? (after[i].throttled - before[i].throttled) / periods : 0;
    });
    if (pgCpu) cpuMs.postgres = (pgCpu.backendsNs + pgCpu.sharedNs) / 1e6 / ok;
    let pg: KindResult['pg'] = null;
    if (config.pg && instantBefore && instantAfter) {
      const wal = await config.pg.counters.between(instantBefore, instantAfter);
      let settledFigures: Pick<NonNullable<KindResult['pg']>, 'xacts' | 'walSyncs' | 'idleXactsPerSec' | 'othersCommits'> = {
        xacts: null,
        walSyncs: null,
        idleXactsPerSec: null,
        othersCommits: null,
      };
      if (kind === settledKind && stats) {
        await sleep(STATS_SETTLE_MS);
        const settled = await config.pg.counters.stats();
        // The statistics cover the run before the measured one too: its purchases count, and the time of neither is quiet.
        const spanned = ok + rewarm.reduce((n, r) => n + r.ok, 0);
        const loadSec = Math.max(...runs.map((r) => r.durationSec)) + Math.max(...rewarm.map((r) => r.durationSec));
        const quietSec = (settled.atMs - stats.atMs) / 1000 - loadSec;
        settledFigures = {
          xacts: (settled.xactCommit - stats.xactCommit - idle.xactsPerSec * quietSec) / spanned,
          walSyncs:
            settled.walSync === null || stats.walSync === null
              ? null
              : (settled.walSync - stats.walSync - idle.walSyncsPerSec * quietSec) / spanned,
          idleXactsPerSec: idle.xactsPerSec,
          othersCommits: othersCommitted(stats, settled, config.pg.counters.database),
        };
        stats = settled;
      }
      pg = {
        ...settledFigures,
        writingXacts: (wal.attributed?.commits ?? wal.writingXacts) / ok,
        walBytes: (wal.attributed?.bytes ?? wal.walBytes) / ok,
        attributed: wal.attributed !== null,
        fpiBytes: wal.attributed ? wal.attributed.fpiBytes / ok : null,
        serverWalBytes: wal.walBytes / ok,
        serverWritingXacts: wal.writingXacts / ok,
        attributionError: wal.attributionError,
      };
    }
    kinds[kind] = {
      rate: rateOf(runs),
      durationSec: Math.max(...runs.map((r) => r.durationSec)),
      summary: summarize(runs),
      statuses: statusesOf(runs),
      warmRate: warmRates[kind]!,
      cpuMs,
      throttled,
      pgCpu: pgCpu && { backendsMs: pgCpu.backendsNs / 1e6 / ok, sharedMs: pgCpu.sharedNs / 1e6 / ok, backends: pgCpu.backends },
      pg,
      otherCores: cpu?.otherCores ?? null,
    };
  }

  let lone: LoadSummary | null = null;
  if (config.lone) {
    await load(run, config.targets.slice(0, 1), config.bodies.many!, LONE_REWARM, 1);
    const runs = await load(run, config.targets.slice(0, 1), config.bodies.many!, options.quick ? LONE.quick : LONE.full, 1);
    checkAnswered(runs, `${config.name}, a lone purchase`);
    lone = summarize(runs);
  }

  let list: ConfigurationResult['list'] = null;
  if (config.list) {
    const [target, paths] = [config.targets[0], config.list];
    // Each connection asks for the paths in turn from the first: a pass over them all each.
    const getLoad = () =>
      runLoad(
        {
          origin: target.origin,
          paths,
          connections: LIST_CONNECTIONS,
          ca: target.ca,
          durationSec: 0,
          amount: LIST_CONNECTIONS * paths.length,
        },
        { onStart: (pid) => run.loadgen.adopt(pid) },
      );
    // Not refused on errors: a list that times out is the figure (its count is in the notes).
    await getLoad();
    const measured = await getLoad();
    list = { summary: summarize([measured]), rate: rateOf([measured]) };
  }
  return { kinds, lone, list, tookSec: (performance.now() - t0) / 1000 };
}

/** Waits until `target` answers `GET /deals/:id` of `dealId` with 200. */
const serving = (target: Target, dealId: string) =>
  untilServing(target.origin, target.ca, `/deals/${encodeURIComponent(dealId)}?api_key=${target.apiKey}`);

interface Catalogue {
  records: ReturnType<typeof benchDeals>;
  many: Array<{ id: string; price: number }>;
  /** A hot deal for each configuration that buys one: unsold before its run. */
  hot: Array<{ id: string; price: number }>;
}

function catalogue(): Catalogue {
  const records = benchDeals(new Date(), MANY_DEALS + 2);
  const deals = records.map((r) => ({ id: r.id, price: r.current_price }));
  return { records, many: deals.slice(0, MANY_DEALS), hot: deals.slice(MANY_DEALS) };
}

/** A signal exits without running the `finally` blocks: the folder is removed then too. */
function removedOnAbort(run: Run, folder: string): string {
  run.groups.onAbort.push(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

async function createDatabase(run: Run, suffix: string): Promise<string> {
  const name = `${run.name}_${suffix}`;
  await run.admin.query(`CREATE DATABASE ${name}`);
  run.databases.push(name);
  return name;
}

async function dropDatabase(run: Run, name: string): Promise<void> {
  await run.admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  run.databases = run.databases.filter((d) => d !== name);
}

async function pgSide(run: Run, database: string): Promise<Configuration['pg']> {
  return {
    counters: await PgCounters.open(run.admin, database, run.inspector),
    cpu: await PgCpuMeter.forServer(run.admin, database),
  };
}

/** (a) The conventional design. */
async function conventional(run: Run, cat: Catalogue): Promise<ConfigurationResult> {
  const database = await createDatabase(run, 'conventional');
  const folder = removedOnAbort(run, mkdtempSync(join(tmpdir(), 'deals-bench-conventional-')));
  let server: ChildProcess | null = null;
  try {
    const client = new Client({ connectionString: databaseUrl(database) });
    await client.connect();
    const seed = await prepareConventionalDatabase(
      client,
      cat.records.map((r) => ({ id: r.id, price: r.current_price, quantity: r.quantity!, startAt: r.start_at!, endAt: r.end_at! })),
      usersOf(run.options),
    ).finally(() => client.end());
    const tls = await localCaCertificate('conventional purchase server', 'rsa');
    writeFileSync(join(folder, 'cert.pem'), tls.cert);
    writeFileSync(join(folder, 'key.pem'), tls.key, { mode: 0o600 });
    const port = await freePort();
    const group = run.groups.group('conventional');
    server = startBuilt(
      'bench/support/conventional-purchase-server.js',
      {
        CONVENTIONAL_DATABASE_URL: databaseUrl(database),
        PORT: String(port),
        HOST: '127.0.0.1',
        TLS_CERT_FILE: join(folder, 'cert.pem'),
        TLS_KEY_FILE: join(folder, 'key.pem'),
      },
      'conventional',
      { logDir, group: { groups: run.groups, group } },
    );
    const target = { origin: `https://127.0.0.1:${port}`, ca: tls.cert, apiKey: encodeURIComponent(seed.apiKey) };
    await until(async () => (await httpsGet(`${target.origin}/health`, target.ca)).status === 200, 'the conventional server');
    return await measureConfiguration(run, {
      hold: () => group.setCpus(CPU),
      name: 'conventional',
      targets: [target],
      groups: [{ label: 'server', group }],
      pg: await pgSide(run, database),
      bodies: {
        hot: purchaseBodies(seed.buyers, cat.many, cat.hot[0], 'hot'),
        many: purchaseBodies(seed.buyers, cat.many, cat.hot[0], 'many'),
      },
      kinds: ['hot', 'many'],
      lone: true,
    });
  } finally {
    if (server) await run.groups.stop(server);
    rmSync(folder, { recursive: true, force: true });
    await dropDatabase(run, database);
  }
}

/** (e) The embedded service: one process, SQLite. */
async function embedded(run: Run, cat: Catalogue): Promise<ConfigurationResult> {
  return withTempDir('distributed-embedded', async (dataDir) => {
    removedOnAbort(run, dataDir);
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      REDIS_URL: '',
      MONGO_URL: '',
      EVENTSTORE_URL: '',
      LOG_LEVEL: 'warn',
      DEMO_DATA: 'off',
      ...BENCH_BUDGETS,
    };
    const apiKey = createPartner(env, 'Distributed bench (embedded)');
    importCatalogue(dataDir, env, cat.records);
    const group = run.groups.group('embedded');
    const api = await startApiProcess(env, 'embedded', { projections: true, logDir, group: { groups: run.groups, group } });
    try {
      const target = { origin: api.origin, ca: await serviceCertificate(dataDir), apiKey: encodeURIComponent(apiKey) };
      await serving(target, cat.hot[0].id);
      const buyers = await makeBuyers(target.origin, target.ca, target.apiKey, usersOf(run.options));
      return await measureConfiguration(run, {
        hold: () => group.setCpus(CPU),
        name: 'embedded',
        targets: [target],
        groups: [{ label: 'api', group }],
        pg: null,
        bodies: {
          hot: purchaseBodies(buyers, cat.many, cat.hot[0], 'hot'),
          many: purchaseBodies(buyers, cat.many, cat.hot[0], 'many'),
        },
        kinds: ['hot', 'many'],
        lone: true,
      });
    } finally {
      await run.groups.stop(api.child);
    }
  });
}

/** (b), (c), (d): one, two, then four API replicas and the worker, on one database. */
async function distributed(run: Run, cat: Catalogue): Promise<Record<'one' | 'two' | 'four', ConfigurationResult>> {
  const database = await createDatabase(run, 'service');
  const prefix = run.name;
  const started: ChildProcess[] = [];
  try {
    return await withTempDir('distributed', async (dataDir) => {
      removedOnAbort(run, dataDir);
      const env = distributedEnv(dataDir, database, prefix);
      const inGroup = (name: string) => ({ groups: run.groups, group: run.groups.group(name) });
      const service = await startService(env, { partner: 'Distributed bench', deals: cat.records, started, logDir, group: inGroup });
      const { apiKey, ca } = service;
      const worker = run.groups.group('worker');
      const replicas: Array<{ label: string; group: CpuGroup; target: Target }> = [
        { label: 'api-1', group: run.groups.group('api-1'), target: { origin: service.apis[0].origin, ca, apiKey } },
      ];
      const startReplicas = async (count: number) => {
        const fresh: typeof replicas = [];
        for (let n = replicas.length + 1; n <= count; n++) {
          const label = `api-${n}`;
          const api = await startApiProcess(env, label, { logDir, group: inGroup(label) });
          started.push(api.child);
          fresh.push({ label, group: run.groups.group(label), target: { origin: api.origin, ca, apiKey } });
        }
        for (const replica of fresh) await serving(replica.target, cat.hot[0].id);
        replicas.push(...fresh);
      };
      const hold = (cpus: number | null) => {
        worker.setCpus(cpus);
        for (const replica of replicas) replica.group.setCpus(cpus);
      };
      const configuration = async (name: string, cpus: number, hot: { id: string; price: number } | null, lone: boolean) =>
        measureConfiguration(run, {
          hold: () => hold(cpus),
          name,
          targets: replicas.map((r) => r.target),
          groups: [...replicas.map((r) => ({ label: r.label, group: r.group })), { label: 'worker', group: worker }],
          pg: await pgSide(run, database),
          bodies: {
            hot: hot ? purchaseBodies(buyers, cat.many, hot, 'hot') : undefined,
            many: purchaseBodies(buyers, cat.many, cat.hot[0], 'many'),
          },
          kinds: hot ? ['hot', 'many'] : ['many'],
          lone,
        });

      const buyers = await makeBuyers(replicas[0].target.origin, replicas[0].target.ca, apiKey, usersOf(run.options));
      const one = await configuration('one replica', CPU, cat.hot[0], true);
      // Every process primed again without quotas, through the new replicas too.
      hold(null);
      await startReplicas(2);
      const two = await configuration('two replicas', CPU, cat.hot[1], false);
      hold(null);
      await startReplicas(4);
      const four = await configuration('four replicas', CPU_FOUR, null, false);
      return { one, two, four };
    });
  } finally {
    await Promise.all(started.map((child) => run.groups.stop(child)));
    await dropDatabase(run, database);
    await deleteRedisKeys(prefix).catch((error: unknown) =>
      process.stderr.write(`distributed bench: Redis keys ${prefix}* left: ${error instanceof Error ? error.message : String(error)}\n`),
    );
  }
}

/**
 * FerretDB (`scripts/ferretdb.sh`, built once with Go) over SQLite in a folder or over a PostgreSQL
 * database, in the CPU group `ferretdb`, with its `MONGO_URL` once it listens.
 */
async function startFerretDB(
  run: Run,
  backend: { sqlite: string } | { postgresql: string },
): Promise<{ child: ChildProcess; url: string }> {
  const script = join(ROOT, 'scripts', 'ferretdb.sh');
  const built = spawnSync('bash', [script, 'build'], { encoding: 'utf8' });
  if (built.status === 3) throw new Error(`DISTRIBUTED_VIEWS=ferretdb: ${built.stdout.trim()}`);
  if (built.status !== 0) throw new Error(`scripts/ferretdb.sh build failed: ${built.stderr.slice(-2000)}`);
  const log = logDir ? openSync(join(logDir, 'ferretdb.log'), 'a') : 'ignore';
  const where = 'sqlite' in backend ? ['--sqlite', backend.sqlite] : ['--postgresql', backend.postgresql];
  const child = run.groups.spawn(run.groups.group('ferretdb'), 'bash', [script, 'start', ...where], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', log],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const printed = /^MONGO_URL=(\S+)$/m.exec(out);
      if (printed) resolve(printed[1]);
    });
    child.once('exit', (code) => reject(new Error(`FerretDB exited as it started (${code})`)));
  });
  child.stdout!.resume();
  return { child, url };
}

/**
 * (`DISTRIBUTED_VIEWS=ferretdb`) One API replica + the worker with the views on PostgreSQL, then on
 * FerretDB: each with a database, a data folder and Redis keys of its own, its processes in groups
 * of their own, FerretDB's too, all at {@link CPU}.
 */
async function viewsSideBySide(run: Run, cat: Catalogue): Promise<Record<'postgresql' | 'ferretdb', ConfigurationResult>> {
  const results: Partial<Record<'postgresql' | 'ferretdb', ConfigurationResult>> = {};
  for (const views of ['postgresql', 'ferretdb'] as const) {
    const database = await createDatabase(run, `views_${views}`);
    const prefix = `${run.name}_${views}`;
    const started: ChildProcess[] = [];
    try {
      results[views] = await withTempDir(`distributed-${views}`, async (dataDir) => {
        removedOnAbort(run, dataDir);
        const ferretdb =
          views === 'postgresql'
            ? null
            : await startFerretDB(
                run,
                VIEWS === 'ferretdb-postgresql' ? { postgresql: databaseUrl(database) } : { sqlite: join(dataDir, 'ferretdb') },
              );
        if (ferretdb) started.push(ferretdb.child);
        const env = { ...distributedEnv(dataDir, database, prefix), ...(ferretdb ? { MONGO_URL: ferretdb.url, MONGO_DB: 'deals' } : {}) };
        const groupOf = (name: string) => run.groups.group(`${views}-${name}`);
        const service = await startService(env, {
          partner: `Distributed bench (views on ${views})`,
          deals: cat.records,
          started,
          logDir,
          group: (name) => ({ groups: run.groups, group: groupOf(name) }),
        });
        const target = { origin: service.apis[0].origin, ca: service.ca, apiKey: service.apiKey };
        const buyers = await makeBuyers(target.origin, target.ca, target.apiKey, usersOf(run.options));
        const groups = [
          { label: 'api-1', group: groupOf('api-1') },
          { label: 'worker', group: groupOf('worker') },
          ...(ferretdb ? [{ label: 'ferretdb', group: run.groups.group('ferretdb') }] : []),
        ];
        const users = buyers.slice(0, run.options.quick ? LIST_USERS.quick : LIST_USERS.full);
        return measureConfiguration(run, {
          hold: () => groups.forEach(({ group }) => group.setCpus(CPU)),
          name: `views on ${views}`,
          targets: [target],
          groups,
          pg: await pgSide(run, database),
          bodies: {
            hot: purchaseBodies(buyers, cat.many, cat.hot[0], 'hot'),
            many: purchaseBodies(buyers, cat.many, cat.hot[0], 'many'),
          },
          kinds: ['hot', 'many'],
          lone: true,
          list: users.map(({ userId }) => `/users/${userId}/purchases?api_key=${target.apiKey}&per_page=10`),
        });
      });
    } finally {
      await Promise.all(started.map((child) => run.groups.stop(child)));
      await dropDatabase(run, database);
      await deleteRedisKeys(prefix).catch((error: unknown) =>
        process.stderr.write(`distributed bench: Redis keys ${prefix}* left: ${error instanceof Error ? error.message : String(error)}\n`),
      );
    }
  }
  return results as Record<'postgresql' | 'ferretdb', ConfigurationResult>;
}

/** The side by side's rows: each figure on FerretDB against the same on PostgreSQL. */
function viewsRows(side: Record<'postgresql' | 'ferretdb', ConfigurationResult>, conditions: string[]): BenchRow[] {
  const [pg, fe] = [side.postgresql, side.ferretdb];
  const against = (what: string) => `the views on PostgreSQL, ${what}`;
  const name = (what: string) => `distributed, views on FerretDB: ${what}`;
  const listLine = (label: string, r: ConfigurationResult) =>
    `  ${label}: a user's purchases (10 a page, ${r.list!.summary.ok} 2xx of ${r.list!.summary.total} over ${LIST_CONNECTIONS} connections): ` +
    `${r.list!.rate.toFixed(0)}/s, p50 ${ms(r.list!.summary.p50Ms)} ms, p99 ${ms(r.list!.summary.p99Ms)} ms, max ${ms(r.list!.summary.maxMs)} ms` +
    (r.list!.summary.ok < r.list!.summary.total || r.list!.summary.errors > 0
      ? `; NOT ALL ANSWERED: ${r.list!.summary.non2xx} non-2xx, ${r.list!.summary.errors} errors, ${r.list!.summary.timeouts} timeouts`
      : '');
  const notes = [
    ...conditions,
    ...summaryLines([
      { label: '1 API replica + worker, views on PostgreSQL', result: pg },
      { label: `1 API replica + worker, views on FerretDB over ${FERRETDB_BACKEND}`, result: fe },
    ]),
    listLine('views on PostgreSQL', pg),
    listLine('views on FerretDB', fe),
    ...detailLines('views on PostgreSQL', pg),
    ...detailLines('views on FerretDB', fe),
  ];
  return [
    ...(['hot', 'many'] as const).map((kind) =>
      row(name(`${KIND_LABEL[kind]}, purchases/s`), fe.kinds[kind]!.rate, 'purchases/s', against(KIND_LABEL[kind]), pg.kinds[kind]!.rate, {
        notes: kind === 'hot' ? notes : undefined,
      }),
    ),
    row(name('a lone purchase, p50 latency'), fe.lone!.p50Ms, 'ms', against('a lone purchase'), pg.lone!.p50Ms),
    row(
      name("a user's purchases list, p99 latency"),
      fe.list!.summary.p99Ms,
      'ms',
      against("a user's purchases list"),
      pg.list!.summary.p99Ms,
    ),
  ];
}

const ms = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(n < 10 ? 2 : 1));
const perSec = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(0));
const sumCpu = (k: KindResult | undefined) => (k ? Object.values(k.cpuMs).reduce((a, b) => a + b, 0) : Number.NaN);

/** The run's figures as the issue's table: a line a configuration. */
function summaryLines(all: Array<{ label: string; result: ConfigurationResult }>): string[] {
  const lines = [
    `  configuration | hot deal /s | ${MANY_DEALS} deals /s | lone purchase p50 (p99) | CPU ms a purchase, hot (${MANY_DEALS} deals): each process; all | ` +
      'PostgreSQL a purchase, hot (200 deals): transactions committed (writing), WAL bytes, WAL syncs',
  ];
  for (const { label, result } of all) {
    const { hot, many } = result.kinds;
    const each = (k: KindResult | undefined) =>
      k
        ? Object.entries(k.cpuMs)
            .map(([p, v]) => `${p} ${ms(v)}`)
            .join(', ')
        : '–';
    const pg = (k: KindResult | undefined) =>
      k?.pg
        ? `${k.pg.xacts === null ? '–' : k.pg.xacts.toFixed(1)} (${k.pg.writingXacts.toFixed(1)}), ${k.pg.walBytes.toFixed(0)} B, ${k.pg.walSyncs === null ? '–' : k.pg.walSyncs.toFixed(2)}`
        : '–';
    lines.push(
      `  ${label} | ${perSec(hot?.rate)} | ${perSec(many?.rate)} | ${result.lone ? `${ms(result.lone.p50Ms)} (${ms(result.lone.p99Ms)}) ms` : '–'} | ` +
        `${hot ? `${each(hot)}; ${ms(sumCpu(hot))}` : '–'} (${many ? `${each(many)}; ${ms(sumCpu(many))}` : '–'}) | ${pg(hot)} (${pg(many)})`,
    );
  }
  return lines;
}

function detailLines(label: string, result: ConfigurationResult): string[] {
  const lines: string[] = [];
  for (const kind of ['hot', 'many'] as const) {
    const k = result.kinds[kind];
    if (!k) continue;
    if (kind === 'hot' || !result.kinds.hot)
      lines.push(`  ${label}: measured in ${result.tookSec.toFixed(0)} s (warm-ups, runs, waits for the statistics, lone purchases)`);
    const throttled = Object.entries(k.throttled)
      .map(([p, share]) => `${p} ${(share * 100).toFixed(0)}%`)
      .join(', ');
    lines.push(
      `  ${label}, ${KIND_LABEL[kind]}: ${k.summary.ok} purchases in ${k.durationSec.toFixed(1)} s (warm-up ${k.warmRate.toFixed(0)}/s), statuses ${k.statuses}; ` +
        `p50 ${ms(k.summary.p50Ms)} ms, p99 ${ms(k.summary.p99Ms)} ms; periods out of quota: ${throttled}` +
        (k.pgCpu
          ? `; PostgreSQL ${ms(k.pgCpu.backendsMs)} ms in ${k.pgCpu.backends} backend(s) + ${ms(k.pgCpu.sharedMs)} ms shared processes`
          : '') +
        (k.pg
          ? (k.pg.idleXactsPerSec === null
              ? '; '
              : `; idle processes ${k.pg.idleXactsPerSec.toFixed(1)} transactions/s (taken off); other databases committed ${k.pg.othersCommits}; `) +
            `server-wide a purchase: WAL ${k.pg.serverWalBytes.toFixed(0)} B, writing transactions ${k.pg.serverWritingXacts.toFixed(1)}` +
            (k.pg.fpiBytes === null ? '' : `; full-page images ${k.pg.fpiBytes.toFixed(0)} B of the attributed WAL`) +
            (k.pg.attributionError ? `; WAL not attributed: ${k.pg.attributionError}` : '')
          : '') +
        (k.otherCores === null
          ? ''
          : `; other processes ${k.otherCores.toFixed(2)} cores${k.otherCores > 0.2 ? ' (machine busy: figures skewed)' : ''}`),
    );
  }
  return lines;
}

export async function distributedBench(options: BenchOptions): Promise<BenchRow[]> {
  const id = randomUUID().replace(/-/g, '').slice(0, 10);
  const groups = new CpuGroups(`deals-bench-${id}`, PERIOD_US);
  const run: Run = {
    name: `deals_dist_${id}`,
    groups,
    loadgen: groups.group('loadgen'),
    admin: new Client({ connectionString: PG }),
    inspector: null,
    databases: [],
    options,
  };
  // On SIGINT/SIGTERM: the processes killed, the groups removed, and the databases dropped (psql, best effort).
  run.groups.onAbort.push(() => {
    for (const database of run.databases)
      spawnSync('psql', [PG, '-qc', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`], { stdio: 'ignore', timeout: 5_000 });
  });
  const t0 = performance.now();
  try {
    await run.admin.connect();
    const version = (await run.admin.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0].v;
    const inspector = new Client({ connectionString: databaseUrl(await createDatabase(run, 'inspect')) });
    await inspector.connect();
    const inspectorProblem = await PgCounters.prepareInspector(inspector);
    if (inspectorProblem) await inspector.end();
    else run.inspector = inspector;
    const cat = catalogue();
    const took: string[] = [];
    const timed = async <T>(what: string, part: () => Promise<T>): Promise<T> => {
      const start = performance.now();
      const result = await part();
      took.push(`${what} ${((performance.now() - start) / 1000).toFixed(0)} s`);
      return result;
    };
    if (VIEWS !== 'postgresql') {
      const side = await timed('views on PostgreSQL, then on FerretDB', () => viewsSideBySide(run, cat));
      return viewsRows(side, [
        `each process (API, worker, FerretDB) in a cgroup v1 cpu group of its own, CFS quota ${CPU} CPU, period ${PERIOD_US / 1000} ms; ` +
          `PostgreSQL ${version} (${new URL(PG).host}) not held (the log, and the views in the first configuration); FerretDB 1.24.2 over ${FERRETDB_BACKEND}; ` +
          `load generator (autocannon) in a group of its own, not counted; ${CONNECTIONS} connections over HTTPS; ` +
          `each load primed without quotas (${primeOf('hot', options)} purchases; ${primeOf('many', options)} on the 200 deals), then held: a warm-up (${warmupPurchases(options)}), ~${REWARM_SEC} s of it again, ` +
          `then as many purchases as the warm-up's rate makes in ${measuredSec(options)} s (at least ${CONNECTIONS * 4}); lone purchase: one connection, ${options.quick ? LONE.quick : LONE.full} in a row; ` +
          `the list: ${LIST_CONNECTIONS} connections, each asking for the first ${options.quick ? LIST_USERS.quick : LIST_USERS.full} users' purchases in turn, a pass not measured then one measured; ` +
          `${usersOf(options)} users with one stored card each; whole bench ${((performance.now() - t0) / 1000).toFixed(0)} s (${took.join(', ')})`,
      ]);
    }
    const conv = await timed('conventional', () => conventional(run, cat));
    const emb = await timed('embedded', () => embedded(run, cat));
    const dist = await timed('the three distributed ones', () => distributed(run, cat));
    const sec = ((performance.now() - t0) / 1000).toFixed(0);

    const c = conv.kinds;
    const e = emb.kinds;
    const [one, two, four] = [dist.one.kinds, dist.two.kinds, dist.four.kinds];
    const conditions = [
      `each process in a cgroup v1 cpu group of its own, CFS quota ${CPU} CPU (${CPU_FOUR} in the four-replica run), period ${PERIOD_US / 1000} ms; ` +
        `PostgreSQL ${version} (${new URL(PG).host}) not held, its CPU = its backends on the configuration's database + its shared processes (/proc schedstat); ` +
        `load generator (autocannon) in a group of its own, not counted; ${CONNECTIONS} connections in all over HTTPS, split over the replicas; ` +
        `each load primed without quotas (${primeOf('hot', options)} purchases; ${primeOf('many', options)} on the 200 deals), then held: a warm-up (${warmupPurchases(options)}), ~${REWARM_SEC} s of it again after the statistics settled, ` +
        `then as many purchases as the warm-up's rate makes in ${measuredSec(options)} s (at least ${CONNECTIONS * 4}), every run's purchases all answered; ` +
        `transactions and WAL syncs read ${STATS_SETTLE_MS / 1000} s after each run; lone purchase: one connection, ${options.quick ? LONE.quick : LONE.full} in a row; ${usersOf(options)} users with one stored card each; whole bench ${sec} s (setups included: ${took.join(', ')})`,
      inspectorProblem
        ? `  WAL bytes and writing transactions server-wide (the WAL position, the transaction id counter): ${inspectorProblem}`
        : "  WAL bytes and writing transactions: the measured run's WAL read back (pg_walinspect) and attributed to the configuration's database " +
          '(records on its blocks, and all records of the transactions that wrote them); server-wide figures in the lines below',
      ...(conv.kinds.hot?.pgCpu && one.hot?.pgCpu
        ? []
        : ['  PostgreSQL CPU unknown: the server does not run on this machine (its backends are not in /proc); the CPU sums leave it out']),
      ...summaryLines([
        { label: 'conventional (Fastify + pg, row lock)', result: conv },
        { label: '1 API replica + worker', result: dist.one },
        { label: '2 API replicas + worker', result: dist.two },
        { label: `4 API replicas + worker at ${CPU_FOUR} CPU`, result: dist.four },
        { label: 'embedded (one process, SQLite)', result: emb },
      ]),
      ...detailLines('conventional', conv),
      ...detailLines('1 replica', dist.one),
      ...detailLines('2 replicas', dist.two),
      ...detailLines('4 replicas', dist.four),
      ...detailLines('embedded', emb),
    ];
    const conventionalLabel = (kind: Kind) => `the conventional design (Fastify + pg, a row lock), ${KIND_LABEL[kind]}`;
    const name = (what: string) => `distributed: ${what}`;
    const rows: BenchRow[] = [];
    for (const kind of ['hot', 'many'] as const)
      rows.push(
        row(
          name(`${KIND_LABEL[kind]}, 1 API replica + worker, purchases/s`),
          one[kind]!.rate,
          'purchases/s',
          conventionalLabel(kind),
          c[kind]!.rate,
          {
            limitUnit: 'purchases/s',
            notes: kind === 'hot' ? conditions : undefined,
          },
        ),
      );
    for (const kind of ['hot', 'many'] as const)
      rows.push(
        row(
          name(`${KIND_LABEL[kind]}, 2 API replicas against 1`),
          two[kind]!.rate,
          'purchases/s',
          `1 API replica + worker, ${KIND_LABEL[kind]}`,
          one[kind]!.rate,
          {
            limitUnit: 'purchases/s',
          },
        ),
      );
    rows.push(
      row(
        name(`${KIND_LABEL.many}, 4 API replicas at ${CPU_FOUR} CPU against 1 at ${CPU}`),
        four.many!.rate,
        'purchases/s',
        `1 API replica + worker, ${KIND_LABEL.many}`,
        one.many!.rate,
        {
          limitUnit: 'purchases/s',
        },
      ),
    );
    for (const kind of ['hot', 'many'] as const)
      rows.push(
        row(
          name(`${KIND_LABEL[kind]}, CPU a purchase, API + worker + PostgreSQL`),
          sumCpu(one[kind]),
          'ms',
          `the embedded mode, one process, ${KIND_LABEL[kind]}`,
          sumCpu(e[kind]),
        ),
      );
    rows.push(
      row(
        name(`${KIND_LABEL.hot}, PostgreSQL transactions committed a purchase`),
        one.hot!.pg?.xacts ?? Number.NaN,
        'transactions',
        conventionalLabel('hot'),
        c.hot!.pg?.xacts ?? Number.NaN,
      ),
    );
    for (const kind of ['hot', 'many'] as const)
      rows.push(
        row(
          name(`${KIND_LABEL[kind]}, WAL bytes a purchase`),
          one[kind]!.pg?.walBytes ?? Number.NaN,
          'B',
          conventionalLabel(kind),
          c[kind]!.pg?.walBytes ?? Number.NaN,
        ),
      );
    rows.push(
      row(name('a lone purchase, p50 latency'), dist.one.lone!.p50Ms, 'ms', 'the conventional design, a lone purchase', conv.lone!.p50Ms),
      row(
        'distributed: embedded mode, a lone purchase, p50 latency',
        emb.lone!.p50Ms,
        'ms',
        'the conventional design, a lone purchase',
        conv.lone!.p50Ms,
      ),
    );
    for (const kind of ['hot', 'many'] as const)
      rows.push(
        row(
          `distributed: embedded mode, ${KIND_LABEL[kind]}, purchases/s`,
          e[kind]!.rate,
          'purchases/s',
          conventionalLabel(kind),
          c[kind]!.rate,
          {
            limitUnit: 'purchases/s',
          },
        ),
      );
    rows.push(
      row(
        'distributed: conventional design, hot deal, CPU a purchase, server + PostgreSQL',
        sumCpu(c.hot),
        'ms',
        'the embedded mode, one process, hot deal',
        sumCpu(e.hot),
      ),
    );
    return rows;
  } finally {
    await run.groups.close();
    await run.inspector?.end().catch(() => undefined);
    for (const database of [...run.databases]) await dropDatabase(run, database).catch(() => undefined);
    await run.admin.end().catch(() => undefined);
  }
}
