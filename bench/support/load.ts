/**
 * The load generator: autocannon in a child process, driven from the bench process over IPC, and
 * the summing of several runs against one target.
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { percentile } from './percentile';

/** One autocannon run, as the parent describes it to the load-generator child. */
export interface LoadSpec {
  /** `https://127.0.0.1:<port>`; the paths come from `paths`. */
  origin: string;
  /** Paths requested in turn on every connection (autocannon `requests`); one path means a fixed URL. */
  paths: string[];
  /** Headers sent with every request (e.g. `authorization`); none when missing. */
  headers?: Record<string, string>;
  connections: number;
  durationSec: number;
  /**
   * When set, exactly this many requests (spread over the connections, at least one each) and the
   * run ends once every one is answered, however long that takes; `durationSec` is then ignored and
   * {@link LoadRun.durationSec} tells how long it took. No request is left unanswered at the end.
   */
  amount?: number;
  /** PEM of the server's certificate, handed to autocannon's `tlsOptions.ca`. */
  ca: string;
  /** POSTs with a JSON body made afresh for every request, to `paths[0]`, instead of GETs of `paths`. */
  post?: PostSpec;
}

/**
 * How the load-generator child makes each POST's body: `template` with every `{n}` replaced by the
 * request's number in this run (0, 1, 2, …, counted over all connections, so unique within the run)
 * and every `{item}` by `items[n]` (wrapping round when the run sends more requests than there are
 * items; {@link LoadRun.built} tells how many it made). Sent with `content-type: application/json`.
 */
export interface PostSpec {
  template: string;
  items?: string[];
  /**
   * A top-level field every 2xx answer (a JSON object) must carry as a non-empty string: the answers
   * without it are counted ({@link LoadRun.missingField}) and the values are sent back in
   * {@link LoadRun.collected}, in the order the answers arrived.
   */
  expectField?: string;
  /** Send every request with an `Idempotency-Key` of its own: this prefix and the request's number. */
  idempotencyKeyPrefix?: string;
  /** When set, request n goes to `paths[n]` (wrapping round) instead of the spec's first path. */
  paths?: string[];
}

/** What the child sends back of one autocannon run. */
export interface LoadRun {
  durationSec: number;
  total: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Response bytes (headers and body) received in 2xx responses. */
  bytes: number;
  /** autocannon's own p99, from its histogram of whole milliseconds. */
  autocannonP99Ms: number;
  /** Latency of every 2xx response, in ms, from autocannon's hrtime-based per-response figure. */
  latenciesMs: Float64Array;
  /** CPU time the load-generator process used in all, start-up included, in µs (user + system). */
  cpuMicros: number;
  /** Cores the load generator kept busy while autocannon ran (near 1: it, not the server, is the limit). */
  busyCores: number;
  /** POST runs: request bodies made (requests sent, plus at most one per connection cut off by the end). 0 for GETs. */
  built: number;
  /** POST runs with `expectField`: its value in each 2xx answer that had it. Empty otherwise. */
  collected: string[];
  /** POST runs with `expectField`: 2xx answers without it. */
  missingField: number;
  /** Status and start of the body of the first few non-2xx answers, to tell why they failed. */
  failureSamples: string[];
  /** POST runs: answers by HTTP status (e.g. `{"200": 5012, "409": 3}`). Empty for GETs. */
  statuses?: Record<string, number>;
}

/** One or more runs against the same target, summed. */
export interface LoadSummary {
  runs: number;
  durationSec: number;
  /** 2xx responses per second over the measured time. */
  okPerSec: number;
  total: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  bytesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The largest of autocannon's own (whole-ms) p99s of the runs. */
  autocannonP99Ms: number;
  /** Mean cores the load generator kept busy. */
  loadGeneratorCores: number;
  /** 2xx answers without the expected field (POST runs with `expectField`; 0 otherwise). */
  missingField: number;
  /** The first few non-2xx answers (status and start of body) over the runs. */
  failureSamples: string[];
}

/**
 * Runs autocannon in a forked child process (`load-child.js`), so that the load generator and the
 * server under test do not share one event loop; with 2 cores each gets its own. `onStart` is given
 * the child's pid before the run begins.
 */
export function runLoad(spec: LoadSpec, { onStart }: { onStart?: (pid: number) => void } = {}): Promise<LoadRun> {
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, 'load-child.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
    // Before it is sent its LoadSpec, so before its first request (e.g. to place it in a CPU group).
    if (onStart && child.pid !== undefined) {
      try {
        onStart(child.pid);
      } catch (error) {
        child.kill();
        reject(error);
        return;
      }
    }
    let answer: { ok: true; run: LoadRun } | { ok: false; error: string } | null = null;
    child.on('message', (message) => {
      answer = message as typeof answer;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (answer?.ok) resolve(answer.run);
      else
        reject(
          new Error(
            answer ? `load generator failed: ${answer.error}` : `load generator exited (code ${code}, signal ${signal}) without a result`,
          ),
        );
    });
    child.send(spec);
  });
}

export function summarize(runs: LoadRun[]): LoadSummary {
  const sum = (pick: (r: LoadRun) => number) => runs.reduce((s, r) => s + pick(r), 0);
  const latencies = new Float64Array(sum((r) => r.latenciesMs.length));
  let at = 0;
  for (const r of runs) {
    latencies.set(r.latenciesMs, at);
    at += r.latenciesMs.length;
  }
  latencies.sort();
  const durationSec = sum((r) => r.durationSec);
  return {
    runs: runs.length,
    durationSec,
    okPerSec: sum((r) => r.ok) / durationSec,
    total: sum((r) => r.total),
    ok: sum((r) => r.ok),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    bytesPerSec: sum((r) => r.bytes) / durationSec,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies.length ? latencies[latencies.length - 1] : Number.NaN,
    autocannonP99Ms: Math.max(...runs.map((r) => r.autocannonP99Ms)),
    loadGeneratorCores: sum((r) => r.busyCores) / runs.length,
    missingField: sum((r) => r.missingField),
    failureSamples: runs.flatMap((r) => r.failureSamples).slice(0, 5),
  };
}
