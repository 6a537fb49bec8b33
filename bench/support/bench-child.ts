import { fork } from 'node:child_process';
import type { BenchRow } from './bench-row';

/** A bench the version run does not have (its run-all refused the name). */
export class UnknownBench extends Error {}

/** What a run-all child prints on stderr when it has no bench of the name (run-all's UsageError). */
const NO_SUCH_BENCH = (name: string) => `no bench named ${name}`;
const KEPT_STDERR = 64 * 1024;

/**
 * Runs one bench in a fresh process of `runAll` (some version's `dist/bench/run-all.js`, forked
 * with `--child=<name>` from `cwd`, with `env` when given, this process's otherwise) and resolves
 * with the rows it sends over IPC. Its stderr is passed through; it rejects when the process fails,
 * with {@link UnknownBench} when that version has no such bench.
 */
export function runBenchChild(
  runAll: string,
  name: string,
  args: string[],
  cwd = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<BenchRow[]> {
  return new Promise((resolve, reject) => {
    const child = fork(runAll, [...args, `--child=${name}`], { cwd, env, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let rows: BenchRow[] | null = null;
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      stderr = (stderr + chunk.toString('utf8')).slice(-KEPT_STDERR);
    });
    child.on('message', (message: { rows: BenchRow[] }) => (rows = message.rows));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 && rows) resolve(rows);
      else if (stderr.includes(NO_SUCH_BENCH(name))) reject(new UnknownBench(`${runAll} has no bench ${name}`));
      else reject(new Error(`bench ${name} (${runAll}) exited with code ${code}`));
    });
  });
}
