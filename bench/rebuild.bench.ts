/**
 * `projections:rebuild` on PostgreSQL: a long log replayed into fresh views while an API replica
 * serves reads, by one rebuild process and by two sharing the views, each process held to a CPU
 * budget of its own ({@link CPU}, `REBUILD_CPU` to change; a cgroup v1 quota, as the distributed
 * benches hold theirs), so that one process stands for one machine.
 *
 * Setup: a database made for the run (`POSTGRES_BENCH_URL`, default the machine's own), Redis
 * (`REDIS_BENCH_URL`) under a prefix of the run's own; the purchases bench's {@link MANY_DEALS}
 * deals, {@link BUYERS} users with a stored card, and one stored-card purchase made through the
 * built API with a worker keeping the views. That purchase's events are the template: the log is
 * filled up to {@link SIZE} events (`--quick`: a fifth) with copies of it appended through the event
 * store port (fresh ids, the buyers in turn, 70% on one hot deal), shaped as the service writes them.
 * `REBUILD_BENCH_DATABASE=<name>` keeps that database after the run and goes on from it next time
 * (to profile by hand).
 *
 * Trials alternate one process (`projections:rebuild`) and two (`--workers=2 --plan` splits the
 * views; each part runs as a CLI process of its own, in its own group), {@link PAIRS} pairs; each
 * is timed from the processes' start to the last one's exit, with an API replica answering reads
 * meanwhile (the slowest answer reported, any answer other than 200 fails the bench). With
 * `REBUILD_AGAINST=<a built checkout>` the same log is also rebuilt by that checkout's CLI, one
 * process, in the same pairs: the rate this one is judged against.
 */
import { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { PostgresEventStore } from '@deals/adapters';
import { countAfter } from '@deals/kernel';
import { benchDeals, makeBuyers, MANY_DEALS } from './purchases.bench';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { CpuGroups, cpuGroupsUnavailable } from './support/cpu-groups';
import { appendClones, PurchaseTemplate } from './support/cloned-purchases';
import { distributedEnv, startApiProcess, startService, untilServing } from './support/distributed-service';
import { cli, serviceCertificate, startBuilt } from './support/service-processes';
import { httpsGet, httpsPostJson } from './support/https-get';
import { BENCH_POSTGRES as PG, deleteRedisKeys } from './support/bench-servers';
import { ROOT } from './support/source-place';
import { withTempDir } from './support/temp-dir';

/** Each rebuild process's quota, in CPUs. */
const CPU = Number(process.env.REBUILD_CPU ?? 1);
const BUYERS = 200;
const SIZE = { full: 1_000_000, quick: 200_000 };
const PAIRS = { full: 2, quick: 1 };
const CLI_SCRIPT = 'apps/cli/src/main.js';

interface Trial {
  sec: number;
  cpuSec: number;
  slowestReadMs: number;
  reads: number;
}

export async function rebuildBench(options: BenchOptions): Promise<BenchRow[]> {
  const unavailable = cpuGroupsUnavailable();
  if (unavailable) {
    process.stderr.write(`rebuild bench skipped: ${unavailable}\n`);
    return [];
  }
  const kept = process.env.REBUILD_BENCH_DATABASE;
  const run = `deals_bench_rebuild_${randomUUID().slice(0, 8)}`;
  const database = kept ?? run;
  const against = process.env.REBUILD_AGAINST;
  const admin = new Client({ connectionString: PG });
  await admin.connect();
  const groups = new CpuGroups(run.replace(/_/g, '-'));
  if (!kept) groups.onAbort.push(() => void admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  try {
    return await withTempDir('rebuild', async (dataDir) => {
      const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount === 1;
      if (!exists) await admin.query(`CREATE DATABASE ${database}`);
      const env = distributedEnv(dataDir, database, run);
      const size = options.quick ? SIZE.quick : SIZE.full;
      const setup = await fill(env, size);
      const serving = await startApi(env, setup.reads);
      const notes: string[] = [setup.note];
      try {
        const plan = JSON.parse(cli(['projections:rebuild', '--workers=2', '--plan', '--json'], env)) as { parts: string[][] };
        notes.push(`two processes: ${plan.parts.map((p) => p.join(', ')).join(' | ')}`);
        const trials = { one: [] as Trial[], two: [] as Trial[], against: [] as Trial[] };
        for (let pair = 0; pair < (options.quick ? PAIRS.quick : PAIRS.full); pair++) {
          trials.one.push(await trial(groups, env, serving, [[]], ROOT));
          trials.two.push(await trial(groups, env, serving, plan.parts, ROOT));
          if (against) trials.against.push(await trial(groups, env, serving, [[]], against));
        }
        const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
        const rate = (ts: Trial[]) => setup.events / median(ts.map((t) => t.sec));
        const describe = (name: string, ts: Trial[]) =>
          `${name}: ${ts.map((t) => `${t.sec.toFixed(1)} s (CPU ${t.cpuSec.toFixed(1)} s, slowest of ${t.reads} reads ${t.slowestReadMs.toFixed(0)} ms)`).join(', ')}`;
        notes.push(`each rebuild process at ${CPU} CPU; PostgreSQL and the API replica without a quota`);
        notes.push(describe('one process', trials.one), describe('two processes', trials.two));
        if (against) notes.push(describe(`one process of ${against}`, trials.against));
        const rows: BenchRow[] = [];
        if (against)
          rows.push(
            row(
              'projections:rebuild, one process',
              rate(trials.one),
              'events/s',
              'the other checkout\u2019s rebuild',
              rate(trials.against),
              {
                aim: { min: 3 },
              },
            ),
          );
        rows.push(
          row('projections:rebuild, two processes', rate(trials.two), 'events/s', 'one process', rate(trials.one), { aim: { min: 1.6 } }),
          row(
            'slowest read during a rebuild',
            Math.max(...[...trials.one, ...trials.two].map((t) => t.slowestReadMs)),
            'ms',
            'aim 200 ms',
            200,
            { aim: { absoluteMax: 200 }, notes },
          ),
        );
        return rows;
      } finally {
        await groups.stop(serving.child);
      }
    });
  } finally {
    groups.close();
    if (!kept) await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    await deleteRedisKeys(run);
  }
}

interface Serving {
  child: ChildProcess;
  origin: string;
  ca: string;
  paths: string[];
}

/** An API replica (views kept by nobody else: nothing is written meanwhile) answering the reads of a trial. */
async function startApi(env: Record<string, string>, reads: Reads): Promise<Serving> {
  const { child, origin } = await startApiProcess(env, 'api', { logDir: process.env.REBUILD_LOG_DIR });
  const ca = await serviceCertificate(env.DATA_DIR);
  const key = `api_key=${reads.apiKey}`;
  const paths = reads.paths.map((path) => `${path}${path.includes('?') ? '&' : '?'}${key}`);
  await untilServing(origin, ca, paths[0]);
  return { child, origin, ca, paths };
}

/**
 * One rebuild: each part (a list of views; `[]` for all of them) a CLI process of `checkout`, in a
 * CPU group of its own; seconds from their start to the last exit, their CPU, and the reads meanwhile.
 */
async function trial(
  groups: CpuGroups,
  env: Record<string, string>,
  serving: Serving,
  parts: string[][],
  checkout: string,
): Promise<Trial> {
  let slowest = 0;
  let reads = 0;
  let polling = true;
  const poll = (async () => {
    for (let i = 0; polling; i++) {
      const t = performance.now();
      const answer = await httpsGet(`${serving.origin}${serving.paths[i % serving.paths.length]}`, serving.ca);
      slowest = Math.max(slowest, performance.now() - t);
      reads++;
      if (answer.status !== 200) throw new Error(`a read during the rebuild answered ${answer.status}`);
    }
  })();
  // Awaited once the rebuild ends; stops the polling at its first failure.
  poll.catch(() => (polling = false));
  const started = performance.now();
  const used = parts.map((part, i) => {
    const group = groups.group(`${env.REDIS_PREFIX}-rebuild-${i}`);
    group.setCpus(CPU);
    const before = group.sample().usageNs;
    const child = startBuilt(join(checkout, 'dist', CLI_SCRIPT), env, `rebuild-${i}`, {
      group: { groups, group },
      args: ['projections:rebuild', ...part],
      logDir: process.env.REBUILD_LOG_DIR,
    });
    const exited = new Promise<void>((resolve, reject) =>
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`projections:rebuild ${part.join(' ')} exited ${code}`)))),
    );
    return { group, before, exited, part, child };
  });
  try {
    await Promise.all(used.map((u) => u.exited));
  } finally {
    polling = false;
    await poll;
  }
  const sec = (performance.now() - started) / 1000;
  const cpuSec = used.reduce((n, u) => n + (u.group.sample().usageNs - u.before), 0) / 1e9;
  return { sec, cpuSec, slowestReadMs: slowest, reads };
}

/**
 * The log: the catalogue, the buyers and one purchase made by the built API and worker; then that
 * purchase copied until the log holds `size` events (a kept database goes on from where it is).
 */
async function fill(env: Record<string, string>, size: number): Promise<{ events: number; note: string; reads: Reads }> {
  const store = new PostgresEventStore(env.DATABASE_URL);
  const probe = new Client({ connectionString: env.DATABASE_URL });
  await probe.connect();
  try {
    // The partner and the reads of the trials, kept beside the log: the views know that partner.
    await probe.query('CREATE TABLE IF NOT EXISTS rebuild_bench (reads jsonb NOT NULL)');
    let events = await countAfter(store, null);
    const kept = (await probe.query<{ reads: Reads }>('SELECT reads FROM rebuild_bench')).rows[0]?.reads;
    if (events >= size && kept) return { events, note: `a kept log of ${events} events`, reads: kept };
    if (kept || events > 0) throw new Error(`the database of DATABASE_URL holds a log of ${events} events made otherwise: name another`);
    const started = performance.now();
    const template = await makeTemplate(env);
    const reads: Reads = {
      apiKey: template.apiKey,
      paths: [`/deals/${template.hotDeal}`, `/users/${template.userId}/purchases?per_page=10`],
    };
    await probe.query('INSERT INTO rebuild_bench (reads) VALUES ($1)', [reads]);
    events = await countAfter(store, null);
    let clone = 0;
    while (events < size) {
      const made = await appendClones(store, template, clone, Math.min(5_000, Math.ceil((size - events) / template.events.length)));
      clone += made.clones;
      events += made.events;
    }
    return {
      events,
      reads,
      note:
        `a log of ${events} events (${clone} copies of one purchase: ${template.events.map((e) => e.type).join(', ')}; ` +
        `${MANY_DEALS} deals, ${BUYERS} buyers) made in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    };
  } finally {
    await store.close();
    await probe.end();
  }
}

/** A partner's key (made before the copies, so in the views) and the paths the trials read with it. */
interface Reads {
  apiKey: string;
  paths: string[];
}

async function makeTemplate(env: Record<string, string>): Promise<PurchaseTemplate & { apiKey: string }> {
  const deals = benchDeals(new Date(), MANY_DEALS);
  const started: ChildProcess[] = [];
  const store = new PostgresEventStore(env.DATABASE_URL);
  try {
    const { apiKey, apis, ca } = await startService(env, { partner: 'Rebuild bench', deals, started });
    const { origin } = apis[0];
    const buyers = await makeBuyers(origin, ca, apiKey, BUYERS);
    const before = await store.head();
    const answer = await httpsPostJson(`${origin}/purchases?api_key=${apiKey}`, ca, {
      deal_id: deals[0].id,
      quantity: 1,
      user_id: buyers[0].userId,
      credit_card_id: buyers[0].cardId,
      expected_price_per_unit: deals[0].current_price,
    });
    if (answer.status !== 200)
      throw new Error(`the template purchase answered ${answer.status}: ${answer.body.toString('utf8').slice(0, 300)}`);
    const purchaseId = (JSON.parse(answer.body.toString('utf8')) as { purchase: { id: string } }).purchase.id;
    const written = (await store.readAll({ after: before, maxCount: 100 })).filter(
      (e) => !e.streamId.startsWith('card') && JSON.stringify([e.streamId, e.data]).includes(purchaseId),
    );
    const paid = written.find((e) => e.type === 'PurchasePaid');
    if (!paid) throw new Error(`the template purchase wrote ${written.map((e) => e.type).join(', ')}`);
    return {
      events: written,
      purchaseId,
      userId: buyers[0].userId,
      cardId: buyers[0].cardId,
      chargeId: (paid.data as { chargeId: string }).chargeId,
      hotDeal: deals[0].id,
      otherDeals: deals.slice(1).map((d) => d.id),
      buyers,
      apiKey,
    };
  } finally {
    await store.close();
    for (const child of started.reverse()) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
}
