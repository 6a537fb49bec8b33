/**
 * The pure part of `npm run bench -- --against=<commit|folder>`: the order of the paired runs, and
 * each figure of the two versions compared as the median and spread of its per-pair B/A ratios.
 * A is the other version, B this one.
 */
import { BenchRow } from './bench-row';
import { formatFigure } from './table';

export type Side = 'A' | 'B';

/** Fewer pairs agree by chance too often to call a change (two pairs: one time in two). */
export const PAIRS_FOR_A_VERDICT = 3;

/** Which side runs first in each pair: A B, B A, A B, … so that a drift of the machine falls on both alike. */
export function pairOrder(pairs: number): Array<[Side, Side]> {
  return Array.from({ length: pairs }, (_, i) => (i % 2 === 0 ? ['A', 'B'] : ['B', 'A']));
}

export function median(values: readonly number[]): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Whether a larger figure is better: the row says so, or else rates (`…/s`) are, and times and sizes are not. */
export function higherIsBetter(row: Pick<BenchRow, 'unit' | 'better'>): boolean {
  return row.better ? row.better === 'higher' : row.unit.trim().endsWith('/s');
}

export interface FigureComparison {
  name: string;
  unit: string;
  higherIsBetter: boolean;
  a: number[];
  b: number[];
  /** B ÷ A of each pair in which both sides produced the figure. */
  ratios: number[];
  aMedian: number;
  bMedian: number;
  ratioMedian: number;
  ratioMin: number;
  ratioMax: number;
  /** `better`/`worse` when every pair's ratio lies on that side of 1 (and there are enough pairs to say), else `unclear`. */
  verdict: 'better' | 'worse' | 'unclear' | 'too few pairs';
}

export interface Comparison {
  figures: FigureComparison[];
  /** Row names only one version produced (a row renamed, added or removed between them). */
  onlyInA: string[];
  onlyInB: string[];
}

/** Rows by name; a name repeated within one run is told apart by `#2`, `#3`, … */
function byName(rows: readonly BenchRow[]): Map<string, BenchRow> {
  const named = new Map<string, BenchRow>();
  for (const row of rows) {
    let name = row.name;
    for (let n = 2; named.has(name); n++) name = `${row.name} #${n}`;
    named.set(name, row);
  }
  return named;
}

/** Compares the rows each pair's A and B runs produced, figure by figure, in B's order (then A's leftovers). */
export function compareRuns(pairs: ReadonlyArray<{ A: readonly BenchRow[]; B: readonly BenchRow[] }>): Comparison {
  const runs = pairs.map((p) => ({ A: byName(p.A), B: byName(p.B) }));
  const names = { A: new Set(runs.flatMap((r) => [...r.A.keys()])), B: new Set(runs.flatMap((r) => [...r.B.keys()])) };
  const figures: FigureComparison[] = [];
  for (const name of names.B) {
    if (!names.A.has(name)) continue;
    const sample = runs.map((r) => r.B.get(name)).find(Boolean)!;
    const a: number[] = [];
    const b: number[] = [];
    const ratios: number[] = [];
    for (const run of runs) {
      const [ra, rb] = [run.A.get(name)?.figure, run.B.get(name)?.figure];
      if (ra !== undefined && Number.isFinite(ra)) a.push(ra);
      if (rb !== undefined && Number.isFinite(rb)) b.push(rb);
      if (ra !== undefined && rb !== undefined && Number.isFinite(ra) && Number.isFinite(rb) && ra !== 0) ratios.push(rb / ra);
    }
    const higher = higherIsBetter(sample);
    const [ratioMin, ratioMax] = ratios.length ? [Math.min(...ratios), Math.max(...ratios)] : [Number.NaN, Number.NaN];
    const above = ratioMin > 1;
    const below = ratioMax < 1;
    figures.push({
      name,
      unit: sample.unit,
      higherIsBetter: higher,
      a,
      b,
      ratios,
      aMedian: median(a),
      bMedian: median(b),
      ratioMedian: median(ratios),
      ratioMin,
      ratioMax,
      verdict:
        ratios.length < PAIRS_FOR_A_VERDICT
          ? 'too few pairs'
          : above
            ? higher
              ? 'better'
              : 'worse'
            : below
              ? higher
                ? 'worse'
                : 'better'
              : 'unclear',
    });
  }
  return {
    figures,
    onlyInA: [...names.A].filter((n) => !names.B.has(n)),
    onlyInB: [...names.B].filter((n) => !names.A.has(n)),
  };
}

const ratioText = (r: number) => (Number.isFinite(r) ? r.toFixed(3) : String(r));

/** The comparison as a fixed-width table, then the rows only one version produced. */
export function comparisonTable({ figures, onlyInA, onlyInB }: Comparison): string {
  const header = ['figure', 'better', 'A median', 'B median', 'B/A median', 'B/A least–greatest', 'pairs', 'B is'];
  const cells = figures.map((f) => [
    f.name,
    f.higherIsBetter ? 'higher' : 'lower',
    formatFigure(f.aMedian, f.unit),
    formatFigure(f.bMedian, f.unit),
    ratioText(f.ratioMedian),
    `${ratioText(f.ratioMin)}–${ratioText(f.ratioMax)}`,
    String(f.ratios.length),
    f.verdict === 'unclear' ? 'no clear change' : f.verdict === 'too few pairs' ? '(too few pairs to say)' : `${f.verdict} in every pair`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const right = new Set([2, 3, 4, 5, 6]);
  const line = (c: string[]) =>
    c
      .map((v, i) => (right.has(i) ? v.padStart(widths[i]) : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const lines = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)];
  for (const [side, names] of [
    ['A', onlyInA],
    ['B', onlyInB],
  ] as const)
    if (names.length) lines.push('', `only in ${side}:`, ...names.map((n) => `  ${n}`));
  return lines.join('\n');
}
