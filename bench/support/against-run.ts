/**
 * `npm run bench -- --against=<commit|folder> [--pairs=3]`: each chosen bench run by the other
 * version (A) and by this one (B) in alternating pairs (A B, B A, …), each run a fresh process of
 * its version's run-all, then per figure the medians of both and of the per-pair B/A ratios with
 * their spread. Pairs run seconds apart, so that the machine's drift over minutes falls on both
 * sides alike. Exits non-zero when a run fails, never because of a ratio.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { compareRuns, comparisonTable, pairOrder, PAIRS_FOR_A_VERDICT, Side } from './against';
import type { BenchRow } from './bench-row';
import { runBenchChild, UnknownBench } from './bench-child';
import { machine } from './conditions';
import { OtherBuild, otherBuild } from './other-build';
import { ROOT } from './source-place';

export interface AgainstSpec {
  against: string;
  pairs: number;
  quick: boolean;
  /** The benches to compare, by name, in run-all's order. */
  benches: string[];
  /** This version's run-all (the B side). */
  self: string;
}

/** This checkout as the header names it: its commit, and whether it has changes not committed. */
function thisVersion(): string {
  const head = spawnSync('git', ['log', '-1', '--format=%h %s'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() ?? '?';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
  return `${ROOT} at ${head.length > 88 ? `${head.slice(0, 87)}…` : head}${dirty ? ' + changes not committed' : ''}`;
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

export async function runAgainst(spec: AgainstSpec): Promise<number> {
  let other: OtherBuild;
  try {
    other = await otherBuild(spec.against);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    return 1;
  }
  const started = Date.now();
  const sides: Record<Side, { runAll: string; cwd: string }> = {
    A: { runAll: join(other.root, 'dist', 'bench', 'run-all.js'), cwd: other.root },
    B: { runAll: spec.self, cwd: ROOT },
  };
  const args = spec.quick ? ['--quick'] : [];
  console.log(`deals-service benchmarks, this version (B) against another (A)${spec.quick ? ', --quick' : ''}`);
  for (const line of machine()) console.log(`  ${line}`);
  console.log(`  A: ${other.label}`);
  console.log(`  B: ${thisVersion()}`);
  console.log(
    `  ${spec.pairs} pair(s) a bench, each run a fresh process of its version's run-all, alternating which goes first (A B, B A, …)`,
  );
  console.log('');

  const failed: string[] = [];
  const tables: string[] = [];
  for (const bench of spec.benches) {
    const runs: Array<{ A: BenchRow[]; B: BenchRow[] }> = [];
    let absentInA = false;
    for (const [i, order] of pairOrder(spec.pairs).entries()) {
      const got: Partial<Record<Side, BenchRow[]>> = {};
      const times: string[] = [];
      for (const side of order) {
        const t0 = Date.now();
        process.stdout.write(`${bench} pair ${i + 1}/${spec.pairs}: ${side} … `);
        try {
          got[side] = await runBenchChild(sides[side].runAll, bench, args, sides[side].cwd);
          console.log(`done in ${seconds(t0)}`);
          times.push(`${side} ${seconds(t0)}`);
        } catch (error) {
          if (error instanceof UnknownBench && side === 'A') {
            console.log(`not in A (its run-all has no bench ${bench}): ${bench} skipped`);
            absentInA = true;
            break;
          }
          console.log('FAILED');
          failed.push(`${bench} ${side} (pair ${i + 1})`);
          console.error(error instanceof Error ? error.message : error);
        }
      }
      if (absentInA) break;
      if (got.A && got.B) runs.push({ A: got.A, B: got.B });
    }
    if (absentInA) tables.push(`${bench}: only in B (A's run-all has no bench of that name)`);
    else if (!runs.length) tables.push(`${bench}: no pair in which both sides ran`);
    else tables.push(`${bench}, ${runs.length} pair(s):\n${comparisonTable(compareRuns(runs))}`);
  }

  console.log('');
  console.log(tables.join('\n\n'));
  console.log('');
  console.log(
    `B/A: this version’s figure ÷ the other’s, per pair; "better/worse in every pair" only when at least ${PAIRS_FOR_A_VERDICT} pairs all agree. ` +
      'How far pairs of one version spread here (--against=.) is the least change that shows.',
  );
  console.log(`total ${seconds(started)}${failed.length ? `; FAILED: ${failed.join(', ')}` : ''}`);
  return failed.length ? 1 : 0;
}
