/**
 * Compares the purchase rate of two built checkouts on this machine, in pairs of short runs that
 * alternate between them. This machine's speed changes by up to half within minutes, so two
 * `npm run bench` runs minutes apart can differ more than the change under test; runs seconds apart
 * in alternating order, judged by the median of their ratios, are far less misled by it. Both
 * servers are started once (in processes of their own, on the purchases bench's setup) and stay up;
 * the one not under load sits idle. Not part of `npm run bench`.
 *
 *   npm run build   (in both checkouts)
 *   node dist/bench/purchases.compare.js <checkout A> <checkout B> [--pairs=10] [--seconds=5] [--mode=hot|many]
 *     [--node-a="<node flags>"] [--node-b="<node flags>"] [--env-a="NAME=value ..."] [--env-b="NAME=value ..."] [--keyed-b]
 *     [--exec-a=<node binary>] [--exec-b=<node binary>]
 *
 * The checkouts may be the same, to compare Node flags alone (`--node-b="--max-semi-space-size=64"`),
 * a setting of the service alone (`--env-b="NAME=value"`), or B's purchases sent with an
 * `Idempotency-Key` each (`--keyed-b`) against A's without. `--exec-b` runs B's server on another
 * Node.js (its checkout's node_modules installed under that one: native addons are built for one).
 *
 * Both servers run with the history seal's timer off ({@link DEFAULT_SETTINGS}; `--env-a` /
 * `--env-b` "SEAL_EVERY_MS=10000" to keep it): each server's seal, every 10 s on a thread of its
 * own, fell into one side's runs more than the other's as the runs alternate, and the same build
 * twice read a median of 0.898 with it, 1.006 without.
 *
 * Prints each pair (rate, p50, CPU per purchase of the server process and of its main thread) and
 * the median, least and greatest B/A rate ratio.
 */
import { ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BenchOptions } from './support/bench-row';
import type { CpuUse } from './support/cpu-meter';

interface RunResult {
  rate: number;
  p50Ms: number;
  cpu: CpuUse | null;
}

/** Settings both servers start with, before `--env-a` / `--env-b`: the seal's timer off. */
const DEFAULT_SETTINGS = 'SEAL_EVERY_MS=86400000';

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

/** `NAME=value NAME=value` as the service's settings. */
const settingsOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split(' ')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );

/** In a child: the purchases API of `checkout` (with `settings` added), measured on each request from the parent. */
async function serve(checkout: string, settings: Record<string, string>): Promise<void> {
  // The checkout's own build, so that each side runs its own code.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bench = require(join(checkout, 'dist/bench/purchases.bench.js')) as typeof import('./purchases.bench');
  const dir = mkdtempSync(join(tmpdir(), 'purchases-compare-'));
  const session = await bench.startPurchasesApi(dir, settings);
  process.on('message', (ask: { seconds: number; mode: 'hot' | 'many'; keyed: boolean }) => {
    const options: BenchOptions = {
      quick: false,
      httpDurationSec: ask.seconds,
      httpRounds: 1,
      httpWarmupSec: 1,
      connections: bench.CONNECTIONS,
      appends: 0,
      appendClients: 0,
      rawCommitSec: 0,
    };
    bench.measure(session, options, ask.mode, { keyed: ask.keyed }).then(
      (m) => process.send!({ rate: m.summary.okPerSec, p50Ms: m.summary.p50Ms, cpu: m.cpu } satisfies RunResult),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
  process.on('disconnect', () => {
    void session.api.close().finally(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  });
  process.send!('ready');
}

function start(checkout: string, nodeFlags: string, settings: string, execPath: string): Promise<ChildProcess> {
  const execArgv = [...process.execArgv, ...nodeFlags.split(' ').filter(Boolean)];
  // On another Node.js the server runs its checkout's copy of this file, so that every module it
  // loads is of that checkout's node_modules (built for that Node.js).
  const script = execPath === process.execPath ? __filename : join(checkout, 'dist', 'bench', 'purchases.compare.js');
  const child = fork(script, [`--serve=${checkout}`, `--settings=${settings}`], {
    execArgv,
    execPath,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((ready, failed) => {
    child.once('message', () => ready(child));
    child.once('exit', (code) => failed(new Error(`the server of ${checkout} stopped (exit code ${code})`)));
  });
}

function run(child: ChildProcess, seconds: number, mode: string, keyed = false): Promise<RunResult> {
  return new Promise((answer) => {
    child.once('message', (result) => answer(result as RunResult));
    child.send({ seconds, mode, keyed });
  });
}

const perPurchase = (r: RunResult, cores: number | null | undefined) => (cores == null ? '?' : ((cores * 1000) / r.rate).toFixed(3));
const line = (r: RunResult) =>
  `${r.rate.toFixed(0)}/s p50 ${r.p50Ms.toFixed(1)} ms, CPU ms/purchase ${perPurchase(r, r.cpu?.ownCores)} (main thread ${perPurchase(r, r.cpu?.mainThreadCores)})`;

async function compare(): Promise<void> {
  const [a, b] = process.argv
    .slice(2)
    .filter((x) => !x.startsWith('--'))
    .map((p) => resolve(p));
  if (!a || !b)
    throw new Error('usage: node dist/bench/purchases.compare.js <checkout A> <checkout B> [--pairs=10] [--seconds=5] [--mode=hot|many]');
  const pairs = Number(arg('pairs', '10'));
  const seconds = Number(arg('seconds', '5'));
  const mode = arg('mode', 'hot');
  const [flagsA, flagsB] = [arg('node-a', ''), arg('node-b', '')];
  const [execA, execB] = [arg('exec-a', process.execPath), arg('exec-b', process.execPath)];
  const [envA, envB] = [arg('env-a', ''), arg('env-b', '')].map((env) => `${DEFAULT_SETTINGS} ${env}`.trim());
  const keyedB = process.argv.includes('--keyed-b');
  console.log(
    `A: ${a} ${flagsA} ${envA} (${execA})\nB: ${b} ${flagsB} ${envB} (${execB})${keyedB ? ' (an Idempotency-Key on every purchase)' : ''}\n${pairs} pairs of ${seconds} s runs (after 1 s of warm-up each), ${mode === 'hot' ? 'one hot deal' : 'many deals'}, alternating which goes first`,
  );
  const [serverA, serverB] = await Promise.all([start(a, flagsA, envA, execA), start(b, flagsB, envB, execB)]);
  try {
    const ratios: number[] = [];
    for (let i = 0; i < pairs; i++) {
      const bFirst = i % 2 === 1;
      const first = await run(bFirst ? serverB : serverA, seconds, mode, bFirst && keyedB);
      const second = await run(bFirst ? serverA : serverB, seconds, mode, !bFirst && keyedB);
      const [ra, rb] = bFirst ? [second, first] : [first, second];
      ratios.push(rb.rate / ra.rate);
      console.log(`pair ${i + 1}: A ${line(ra)} | B ${line(rb)} | B/A ${(rb.rate / ra.rate).toFixed(3)}`);
    }
    ratios.sort((x, y) => x - y);
    const mid = ratios.length / 2;
    const median = ratios.length % 2 ? ratios[Math.floor(mid)] : (ratios[mid - 1] + ratios[mid]) / 2;
    console.log(`B/A rate: median ${median.toFixed(3)}, least ${ratios[0].toFixed(3)}, greatest ${ratios[ratios.length - 1].toFixed(3)}`);
  } finally {
    serverA.disconnect();
    serverB.disconnect();
  }
}

const serving = process.argv.find((x) => x.startsWith('--serve='));
(serving ? serve(serving.slice('--serve='.length), settingsOf(arg('settings', ''))) : compare()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
