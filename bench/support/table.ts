/** The table `run-all` prints: one line a row, numbers right-aligned with their units. */
import { BenchRow, missesAim } from './bench-row';

/** A figure with its unit, as the tables print it (ms with 2 decimals, small figures with 1). */
export const formatFigure = (n: number, unit: string) => {
  if (!Number.isFinite(n)) return String(n);
  const digits = unit === 'ms' ? 2 : n < 100 ? 1 : 0;
  return `${n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })} ${unit}`;
};

/** Ratio aims as `≥ 0.5` / `≤ 2`; a ceiling on the figure itself with its unit, `figure ≤ 25 ms`. */
const aimText = ({ aim, unit }: BenchRow) =>
  !aim
    ? ''
    : [
        aim.min !== undefined ? `≥ ${aim.min}` : '',
        aim.max !== undefined ? `≤ ${aim.max}` : '',
        aim.absoluteMax !== undefined ? `figure ≤ ${aim.absoluteMax} ${unit}` : '',
        aim.absoluteMin !== undefined ? `figure ≥ ${aim.absoluteMin.toLocaleString('en-US')} ${unit}` : '',
      ]
        .filter(Boolean)
        .join(', ');

/** The rows as a fixed-width text table: name, figure, limit, ratio, aim and verdict. */
export function table(rows: BenchRow[]): string {
  const header = ['bench', 'figure', 'limit (measured in this run)', 'limit', 'ratio', 'aim', 'verdict'];
  const cells = rows.map((r) => [
    r.name,
    formatFigure(r.figure, r.unit),
    r.limitName,
    formatFigure(r.limit, r.limitUnit ?? r.unit),
    Number.isFinite(r.ratio) ? r.ratio.toFixed(2) : String(r.ratio),
    aimText(r),
    r.aim ? (missesAim(r) ? 'below aim' : 'ok') : '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const right = new Set([1, 3, 4]);
  const line = (c: string[]) =>
    c
      .map((v, i) => (right.has(i) ? v.padStart(widths[i]) : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}
