/**
 * The measurement the HTTP benches share: the API against the bare route (`bare-route.ts`) serving
 * the very bytes the API returned, for the same requests, in the same run.
 *
 * The bare route is started for the given path → body map and checked against the API once; each
 * target then gets an unmeasured warm-up run, and the measured time is split into rounds that
 * alternate the two (bare-API, API-bare, …), so that a change in background load on the machine
 * falls on both alike. autocannon runs in a forked child (`load.ts`), requesting the paths in turn
 * on every connection; the CPU this process, the load generator and other processes used meanwhile
 * is printed beside the figures.
 */
import { BenchOptions } from './bench-row';
import { startBareRoute, TlsMaterial } from './bare-route';
import { CpuUse, describeInterference, meanCpuUse, startCpuMeter } from './cpu-meter';
import { httpsGet } from './https-get';
import { LoadRun, LoadSummary, runLoad, summarize } from './load';

export interface AgainstBareSpec {
  options: BenchOptions;
  tls: TlsMaterial;
  /** `https://127.0.0.1:<port>` of the running API. */
  apiOrigin: string;
  /** Each requested path (with its query, as sent) → the body the API returned for it, fetched once before. */
  bodies: ReadonlyMap<string, Buffer>;
  /** Headers sent with every request to both targets (e.g. `authorization`). */
  headers?: Record<string, string>;
  /** What is requested, heading the notes, e.g. `GET /deals/:id`. */
  label: string;
  /** What the requests rotate through, e.g. `5 deal ids`. */
  rotation: string;
  /**
   * Bytes by which the API's body may differ, on the check, from the one fetched before (time-dependent
   * fields such as state or counts may have changed since); 16 unless given.
   */
  sizeSlack?: number;
}

export interface AgainstBare {
  api: LoadSummary;
  bare: LoadSummary;
  /** The conditions, then one line of counts, latencies and CPU for each target. */
  notes: string[];
}

export type Target = 'bare' | 'api';

export interface Alternated {
  api: LoadSummary;
  bare: LoadSummary;
  /** Mean CPU use over each target's measured rounds. */
  cpu: Record<Target, CpuUse | null>;
  /** Each target's unmeasured warm-up run, then its measured runs in order. */
  runs: Record<Target, LoadRun[]>;
}

/**
 * The timing the HTTP benches share: an unmeasured warm-up run of each target
 * (`options.httpWarmupSec`), then `options.httpDurationSec` measured per target, split into
 * `options.httpRounds` rounds that alternate the two (bare-API, API-bare, …), with the CPU used
 * meanwhile. `load` makes one run against a target for the given seconds.
 */
export async function alternateRounds(
  options: BenchOptions,
  load: (target: Target, durationSec: number) => Promise<LoadRun>,
): Promise<Alternated> {
  const runs: Record<Target, LoadRun[]> = { bare: [], api: [] };
  for (const target of ['bare', 'api'] as const) runs[target].push(await load(target, options.httpWarmupSec));
  const measured: Record<Target, LoadRun[]> = { bare: [], api: [] };
  const cpu: Record<Target, Array<CpuUse | null>> = { bare: [], api: [] };
  const roundSec = options.httpDurationSec / options.httpRounds;
  for (let round = 0; round < options.httpRounds; round++) {
    const order: Target[] = round % 2 === 0 ? ['bare', 'api'] : ['api', 'bare'];
    for (const target of order) {
      const meter = startCpuMeter();
      const run = await load(target, roundSec);
      cpu[target].push(meter(run.cpuMicros));
      measured[target].push(run);
      runs[target].push(run);
    }
  }
  return {
    api: summarize(measured.api),
    bare: summarize(measured.bare),
    cpu: { api: meanCpuUse(cpu.api), bare: meanCpuUse(cpu.bare) },
    runs,
  };
}

export async function measureAgainstBare(spec: AgainstBareSpec): Promise<AgainstBare> {
  const { options, tls, apiOrigin, bodies, headers } = spec;
  const paths = [...bodies.keys()];
  const bare = await startBareRoute(tls, bodies);
  try {
    for (const path of paths) {
      const [fromApi, fromBare] = await Promise.all([
        httpsGet(apiOrigin + path, tls.cert, headers),
        httpsGet(bare.origin + path, tls.cert, headers),
      ]);
      if (fromBare.status !== 200 || fromApi.status !== 200)
        throw new Error(`${path}: API answered ${fromApi.status}, bare route ${fromBare.status}`);
      // Same bytes as fetched once before, give or take the few that time-dependent fields of the
      // API's answer (state, counts) may have changed since.
      if (Math.abs(fromApi.body.length - fromBare.body.length) > (spec.sizeSlack ?? 16)) {
        throw new Error(`${path}: API body ${fromApi.body.length} B, bare body ${fromBare.body.length} B`);
      }
    }
    const origins: Record<Target, string> = { bare: bare.origin, api: apiOrigin };
    const {
      api,
      bare: bareSummary,
      cpu,
    } = await alternateRounds(options, (target, durationSec) =>
      runLoad({ origin: origins[target], paths, headers, connections: options.connections, ca: tls.cert, durationSec }),
    );
    const result = { api, bare: bareSummary };
    for (const [name, r] of [
      ['API', result.api],
      ['bare route', result.bare],
    ] as const) {
      if (r.ok === 0) throw new Error(`${name}: no 2xx response (non-2xx ${r.non2xx}, errors ${r.errors})`);
    }
    const sizes = [...bodies.values()].map((b) => b.length);
    const conditions =
      `${spec.label}: ${options.connections} connections, pipelining 1, ${options.httpWarmupSec} s warm-up each, then ${options.httpDurationSec} s measured each ` +
      `in ${options.httpRounds} alternating round(s); ${spec.rotation} requested in turn (autocannon requests), bodies ${Math.min(...sizes)}–${Math.max(...sizes)} B`;
    return {
      ...result,
      notes: [conditions, loadCounts('  API ', result.api, cpu.api), loadCounts('  bare', result.bare, cpu.bare)],
    };
  } finally {
    await bare.close();
  }
}

/** One target's counts, latencies, throughput and CPU, as a note line. */
export function loadCounts(name: string, r: LoadSummary, use: CpuUse | null): string {
  return (
    `${name}: ${r.total} requests, 2xx ${r.ok}, non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}` +
    `${r.missingField ? `, 2xx without the expected field ${r.missingField}` : ''}; ` +
    `latency p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms (autocannon's whole-ms p99 ${r.autocannonP99Ms}), max ${r.maxMs.toFixed(1)} ms; ` +
    `${(r.bytesPerSec / 1e6).toFixed(1)} MB/s` +
    `; CPU: ${use ? `server process ${use.ownCores.toFixed(2)} cores${use.mainThreadCores === null ? '' : ` (its main thread ${use.mainThreadCores.toFixed(2)}: ${((use.mainThreadCores * 1000) / Math.max(1, r.okPerSec)).toFixed(3)} ms per 2xx answer)`}, ` : ''}load generator ${r.loadGeneratorCores.toFixed(2)}` +
    `${r.loadGeneratorCores > 0.9 ? ' (saturated: here the load generator is the limit)' : ''}; ` +
    describeInterference(use)
  );
}
