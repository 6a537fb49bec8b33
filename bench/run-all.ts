/**
 * Runs every bench and prints one table: each figure beside the limit it is measured against in
 * the same run, and their ratio. `npm run bench` (full) or `npm run bench -- --quick` (smoke run:
 * 3 s HTTP runs, fewer appends); `--only=<name>[,<name>]` runs some of them (names below).
 *
 * Each bench runs in a process of its own (this file, forked with `--child=<name>`), so that none
 * pays for the heap, caches or threads an earlier one left behind; its limits are measured in that
 * same process. Exits non-zero when a bench throws; a ratio that misses its aim prints "below aim"
 * and does not fail the run. Benchmarks never run under `npm test` (jest's roots leave `bench/` out).
 */
import { fork } from 'node:child_process';
import { Bench, BenchOptions, BenchRow, resolveCrossAims } from './support/bench-row';
import { machine } from './support/conditions';
import { table } from './support/table';
import { accountsBench } from './accounts.bench';
import { discoveryBench } from './discovery.bench';
import { eventStoreBench } from './event-store.bench';
import { httpDealBench } from './http-deal.bench';
import { purchasesBench } from './purchases.bench';
import { cardLinksBench } from './card-links.bench';
import { batchEmailBench } from './batch-email.bench';
import { postgresBench } from './postgres.bench';
import { replicasBench } from './replicas.bench';
import { historyBench } from './history.bench';

/** Every bench, in the order they run. Later issues add theirs here. */
const BENCHES: Array<{ name: string; run: Bench }> = [
  { name: 'http-deal', run: httpDealBench },
  { name: 'event-store', run: eventStoreBench },
  { name: 'discovery', run: discoveryBench },
  { name: 'accounts', run: accountsBench },
  { name: 'purchases', run: purchasesBench },
  { name: 'card-links', run: cardLinksBench },
  { name: 'batch-email', run: batchEmailBench },
  { name: 'postgres', run: postgresBench },
  { name: 'replicas', run: replicasBench },
  { name: 'history', run: historyBench },
];

class UsageError extends Error {}

function parseArgs(argv: string[]): { options: BenchOptions; only: Set<string> | null } {
  const unknown = argv.filter((a) => a !== '--quick' && !a.startsWith('--only=') && !a.startsWith('--child='));
  if (unknown.length)
    throw new UsageError(`unknown argument(s) ${unknown.join(' ')}; use --quick and --only=<${BENCHES.map((b) => b.name).join('|')}>`);
  const quick = argv.includes('--quick');
  const onlyArg = argv.find((a) => a.startsWith('--only='));
  const only = onlyArg ? new Set(onlyArg.slice('--only='.length).split(',').filter(Boolean)) : null;
  for (const name of only ?? []) if (!BENCHES.some((b) => b.name === name)) throw new UsageError(`no bench named ${name}`);
  return {
    only,
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

/** Runs one bench in a fresh process; resolves with its rows (rejects if it fails). */
function runInChild(name: string, argv: string[]): Promise<BenchRow[]> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, [...argv.filter((a) => !a.startsWith('--only=')), `--child=${name}`], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    let rows: BenchRow[] | null = null;
    child.on('message', (message: { rows: BenchRow[] }) => (rows = message.rows));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 && rows ? resolve(rows) : reject(new Error(`bench ${name} exited with code ${code}`))));
  });
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
  const { options, only } = parseArgs(process.argv.slice(2));
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
      const produced = await runInChild(bench.name, process.argv.slice(2));
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
