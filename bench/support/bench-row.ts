/**
 * What every bench returns: a measured figure beside the limit it is measured against in the same
 * run, and their ratio. A bench file exports `async (options) => BenchRow[]`; `run-all.ts` prints
 * the rows as one table.
 */

/** How the whole run is set up (`npm run bench -- --quick` shortens everything for a smoke run). */
export interface BenchOptions {
  quick: boolean;
  /** Seconds each HTTP load run lasts (10 normally, 3 with --quick). */
  httpDurationSec: number;
  /** Rounds the measured HTTP time is split into, alternating the targets (2 normally, 1 with --quick). */
  httpRounds: number;
  /** Seconds of unmeasured load before each measured HTTP run, to let the JIT and TLS sessions settle. */
  httpWarmupSec: number;
  /** Concurrent keep-alive connections of the load generator. */
  connections: number;
  /** Appends made by the event-store bench (20,000 normally). */
  appends: number;
  /** Concurrent appending "clients" of the event-store bench. */
  appendClients: number;
  /** Upper bound, in seconds, of the raw one-commit-per-insert loop. */
  rawCommitSec: number;
}

export interface BenchRow {
  /** What was measured, e.g. `GET /deals/:id req/s`. */
  name: string;
  figure: number;
  unit: string;
  /** What the figure is measured against, e.g. `bare Fastify 5 HTTPS route`. */
  limitName: string;
  limit: number;
  /** Unit of the limit when it differs from the figure's (appends/s against commits/s). */
  limitUnit?: string;
  /** figure ÷ limit. */
  ratio: number;
  /**
   * The ratio this figure should reach (`min`) or stay under (`max`), and/or a ceiling for the figure
   * itself in its unit (`absoluteMax`, e.g. a p99 of 25 ms) and/or a floor for it (`absoluteMin`,
   * e.g. 1,000 purchases/s); `atLeastRatioOf`: another row's ratio as `min` (set by `run-all` when
   * that row ran too; {@link resolveCrossAims}). Missing it prints "below aim", never fails the run.
   */
  aim?: { min?: number; max?: number; absoluteMax?: number; absoluteMin?: number; atLeastRatioOf?: string };
  /**
   * Whether a larger figure is the better one, for comparing two versions (`--against`); when
   * left out, rates (a unit ending in `/s`) are and times and sizes are not.
   */
  better?: 'higher' | 'lower';
  /** Conditions worth printing under the table (non-2xx counts, rows read, …). */
  notes?: string[];
}

export type Bench = (options: BenchOptions) => Promise<BenchRow[]>;

export function row(
  name: string,
  figure: number,
  unit: string,
  limitName: string,
  limit: number,
  extra: Pick<BenchRow, 'aim' | 'notes' | 'limitUnit' | 'better'> = {},
): BenchRow {
  return { name, figure, unit, limitName, limit, ratio: limit > 0 ? figure / limit : Number.NaN, ...extra };
}

/** Whether a row misses its aim (rows without an aim never do). */
export function missesAim({ figure, ratio, aim }: BenchRow): boolean {
  if (!aim) return false;
  if (aim.absoluteMax !== undefined && !(figure <= aim.absoluteMax)) return true;
  if (aim.absoluteMin !== undefined && !(figure >= aim.absoluteMin)) return true;
  if (aim.min === undefined && aim.max === undefined) return false;
  if (!Number.isFinite(ratio)) return true;
  return (aim.min !== undefined && ratio < aim.min) || (aim.max !== undefined && ratio > aim.max);
}

/** Gives each row aiming at another row's ratio that ratio as its `min` (left without one when that row did not run). */
export function resolveCrossAims(rows: BenchRow[]): void {
  for (const r of rows) {
    const other = r.aim?.atLeastRatioOf;
    if (!other) continue;
    const target = rows.find((o) => o.name === other);
    if (target && Number.isFinite(target.ratio)) r.aim = { ...r.aim, min: Math.round(target.ratio * 1000) / 1000 };
    else (r.notes ??= []).push(`  ${r.name}: its aim (the ratio of "${other}") is unknown: that bench did not run`);
  }
}
