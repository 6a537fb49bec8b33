/**
 * Runs every bench and prints one table: each figure beside the limit it is measured against in
 * the same run, and their ratio. `npm run bench` (full) or `npm run bench -- --quick` (smoke run:
 * 3 s HTTP runs, fewer appends); `--only=<name>[,<name>]` runs some of them (names below).
 * `--against=<commit|folder> [--pairs=N]` runs them in alternating pairs with another version and
 * prints each figure's B/A (`support/against-run.ts`).
 *
 * Each bench runs in a process of its own (this file, forked with `--child=<name>`), so that none
 * pays for the heap, caches or threads an earlier one left behind; its limits are measured in that
 * same process. Exits non-zero when a bench throws; a ratio that misses its aim prints "below aim"
 * and does not fail the run. Benchmarks never run under `npm test` (jest's roots leave `bench/` out).
 */
import { runAgainst } from './support/against-run';
import { runBenchChild } from './support/bench-child';
import { Bench, BenchOptions, BenchRow, resolveCrossAims } from './support/bench-row';
import { machine } from './support/conditions';
import { table } from './support/table';
import { accountsBench } from './accounts.bench';
import { discoveryBench } from './discovery.bench';
import { eventStoreBench } from './event-store.bench';
import { httpDealBench } from './http-deal.bench';
import { purchasesBench } from './purchases.bench';
import { cardLinksBench } from './card-links.bench';
import { refundsBench } from './refunds.bench';
import { batchEmailBench } from './batch-email.bench';
import { postgresBench } from './postgres.bench';
import { replicasBench } from './replicas.bench';
import { historyBench } from './history.bench';
import { webhooksBench } from './webhooks.bench';
import { distributedBench } from './distributed.bench';
import { workersBench } from './workers.bench';
import { rebuildBench } from './rebuild.bench';
import { bulkJobsBench } from './bulk-jobs.bench';

/** Every bench, in the order they run. Later issues add theirs here. */
const BENCHES: Array<{ name: string; run: Bench }> = [
  { name: 'http-deal', run: httpDealBench },
  { name: 'event-store', run: eventStoreBench },
  { name: 'discovery', run: discoveryBench },
  { name: 'accounts', run: accountsBench },
  { name: 'purchases', run: purchasesBench },
  { name: 'refunds', run: refundsBench },
  { name: 'card-links', run: cardLinksBench },
  { name: 'batch-email', run: batchEmailBench },
  { name: 'postgres', run: postgresBench },
  { name: 'replicas', run: replicasBench },
  { name: 'history', run: historyBench },
  { name: 'webhooks', run: webhooksBench },
  { name: 'distributed', run: distributedBench },
  { name: 'workers', run: workersBench },
  { name: 'rebuild', run: rebuildBench },
  { name: 'bulk-jobs', run: bulkJobsBench },
];

class UsageError extends Error {}

interface Args {
  options: BenchOptions;
  only: Set<string> | null;
  /** `--against=<commit|folder>`: the other version, and how many pairs of runs. */
  against: { version: string; pairs: number } | null;
}

const DEFAULT_PAIRS = 3;

function parseArgs(argv: string[]): Args {
  const valued = ['--only=', '--child=', '--against=', '--pairs='];
  const unknown = argv.filter((a) => a !== '--quick' && !valued.some((v) => a.startsWith(v)));
  if (unknown.length)
    throw new UsageError(
      `unknown argument(s) ${unknown.join(' ')}; use --quick, --only=<${BENCHES.map((b) => b.name).join('|')}>, --against=<commit|folder> [--pairs=N]`,
    );
  const value = (prefix: string) => argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
  const quick = argv.includes('--quick');
  const onlyArg = value('--only=');
  const only = onlyArg !== undefined ? new Set(onlyArg.split(',').filter(Boolean)) : null;
  for (const name of only ?? []) if (!BENCHES.some((b) => b.name === name)) throw new UsageError(`no bench named ${name}`);
  const version = value('--against=');
  const pairs = Number(value('--pairs=') ?? DEFAULT_PAIRS);
  if (value('--pairs=') !== undefined && version === undefined) throw new UsageError('--pairs goes with --against');
  if (!Number.isSafeInteger(pairs) || pairs < 1) throw new UsageError('--pairs takes a whole number of at least 1');
  if (version === '') throw new UsageError('--against takes a commit or a folder');
  return {
    only,
    against: version === undefined ? null : { version, pairs },
    options: {
      quick,
      httpDurationSec: quick ? 3 : 10,
      httpWarmupSec: quick ? 1 : 3,
      httpRounds: quick ? 1 : 2,
      connections: 20,
      appends: quick ? 4_000 : 20_000,
      appendClients: 200,
      rawCommitSec: quick ? 2 : 5,
    },
  };
}

/** The child's side: one bench, its rows sent back to the parent. */
async function child(name: string, options: BenchOptions): Promise<number> {
  const bench = BENCHES.find((b) => b.name === name);
  if (!bench) throw new UsageError(`no bench named ${name}`);
  const rows = await bench.run(options);
  await new Promise<void>((resolve, reject) => process.send!({ rows }, (error: Error | null) => (error ? reject(error) : resolve())));
  process.disconnect(); // the channel would keep this process alive
  return 0;
}

async function main(): Promise<number> {
  const childArg = process.argv.find((a) => a.startsWith('--child='));
  if (childArg) return child(childArg.slice('--child='.length), parseArgs(process.argv.slice(2)).options);
  const { options, only, against } = parseArgs(process.argv.slice(2));
  if (against)
    return runAgainst({
      against: against.version,
      pairs: against.pairs,
      quick: options.quick,
      benches: BENCHES.filter((b) => !only || only.has(b.name)).map((b) => b.name),
      self: __filename,
    });
  const started = Date.now();
  console.log(`deals-service benchmarks${options.quick ? ' (--quick smoke run: short durations, figures are rough)' : ''}`);
  for (const line of machine()) console.log(`  ${line}`);
  console.log(
    `  each bench in a fresh process; HTTP: servers in that process, autocannon in a process of its own; HTTPS with the API's self-signed certificate;\n` +
      `        ${options.connections} connections, ${options.httpWarmupSec} s warm-up + ${options.httpDurationSec} s measured per target (${options.httpRounds} alternating round(s))`,
  );
  console.log(
    `  event store: ${options.appends} appends from ${options.appendClients} concurrent clients; raw commit loop up to ${options.rawCommitSec} s`,
  );
  console.log('');

  const rows: BenchRow[] = [];
  const failed: string[] = [];
  for (const bench of BENCHES) {
    if (only && !only.has(bench.name)) continue;
    const t0 = Date.now();
    process.stdout.write(`running ${bench.name} … `);
    try {
      const produced = await runBenchChild(__filename, bench.name, options.quick ? ['--quick'] : []);
      rows.push(...produced);
      console.log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } catch (error) {
      failed.push(bench.name);
      console.log('FAILED');
      console.error(error instanceof Error ? error.stack : error);
    }
  }

  console.log('');
  resolveCrossAims(rows);
  if (rows.length) console.log(table(rows));
  const notes = rows.flatMap((r) => r.notes ?? []);
  if (notes.length) {
    console.log('');
    for (const note of notes) console.log(`  ${note}`);
  }
  console.log('');
  console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s${failed.length ? `; FAILED: ${failed.join(', ')}` : ''}`);
  return failed.length ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof UsageError ? error.message : error instanceof Error ? error.stack : error);
    process.exitCode = 1;
  },
);
