/**
 * The load-generator process forked by `load.ts`: receives one {@link LoadSpec} over IPC, runs
 * autocannon with it, sends back a {@link LoadRun} and exits. Not a bench of its own.
 */
import autocannon from 'autocannon';
import type { EventEmitter } from 'node:events';
import type { LoadRun, LoadSpec, PostSpec } from './load';

/** How many non-2xx answers are kept (status and body start) to tell why they failed. */
const FAILURE_SAMPLES = 3;

/** What the POST requests' hooks count and collect over one run. */
interface PostTally {
  built: number;
  collected: string[];
  missingField: number;
  failureSamples: string[];
  statuses: Record<string, number>;
}

/**
 * autocannon's `requests` entry for POSTs made from `post`: `setupRequest` builds each body (it
 * runs once for every request a connection sends, see autocannon's requestIterator), `onResponse`
 * checks each answer for the expected field.
 */
function postRequest(path: string, post: PostSpec, tally: PostTally): autocannon.Request {
  const items = post.items ?? [];
  const parts = post.template.split(/(\{n\}|\{item\})/);
  return {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    setupRequest: (request) => {
      const n = tally.built++;
      const body = parts
        .map((p) => (p === '{n}' ? String(n) : p === '{item}' ? (items.length ? items[n % items.length] : '') : p))
        .join('');
      const own = post.paths?.length ? { path: post.paths[n % post.paths.length] } : {};
      if (post.idempotencyKeyPrefix === undefined) return { ...request, ...own, body };
      return { ...request, ...own, body, headers: { ...request.headers, 'idempotency-key': `${post.idempotencyKeyPrefix}${n}` } };
    },
    onResponse: (status: number, body: string) => {
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
      if (status < 200 || status >= 300) {
        if (tally.failureSamples.length < FAILURE_SAMPLES) tally.failureSamples.push(`${status} ${body.slice(0, 300)}`);
        return;
      }
      if (!post.expectField) return;
      let value: unknown;
      try {
        value = (JSON.parse(body) as Record<string, unknown>)[post.expectField];
      } catch {
        value = undefined;
      }
      if (typeof value === 'string' && value !== '') tally.collected.push(value);
      else tally.missingField++;
    },
  } as autocannon.Request;
}

async function run(spec: LoadSpec): Promise<LoadRun> {
  // autocannon's own histogram keeps whole milliseconds; its 'response' event carries the
  // hrtime-based latency as a float, kept here (2xx only, as autocannon does) for sub-ms percentiles.
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const tally: PostTally = { built: 0, collected: [], missingField: 0, failureSamples: [], statuses: {} };
  const requests = spec.post
    ? [postRequest(spec.paths[0], spec.post, tally)]
    : spec.paths.map((path) => ({ method: 'GET' as const, path }));
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const instance = autocannon({
    url: `${spec.origin}${spec.paths[0]}`,
    connections: spec.connections,
    pipelining: 1,
    duration: spec.durationSec,
    ...(spec.amount ? { amount: spec.amount } : {}),
    // autocannon always connects with rejectUnauthorized: false (lib/httpClient.js); the CA is
    // given anyway so that the intent is visible. The non-2xx and error counts tell if TLS failed.
    tlsOptions: { ca: spec.ca },
    // autocannon merges these into every entry of `requests`.
    headers: spec.headers,
    requests,
  }) as unknown as Promise<autocannon.Result> & EventEmitter; // the promise is also autocannon's event tracker
  // A run of a set amount ends at its last answer: autocannon notices that it is done only on its
  // once-a-second tick, so its own duration of a short run is whole seconds, not the run's time.
  let lastAnswer = started;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    lastAnswer = process.hrtime.bigint();
    if (status < 200 || status >= 300) return;
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = ms;
  });
  const result = await instance;
  const runMicros = Number(process.hrtime.bigint() - started) / 1000;
  const runCpu = process.cpuUsage(cpuBefore);
  const cpu = process.cpuUsage();
  return {
    durationSec: spec.amount ? Number(lastAnswer - started) / 1e9 : result.duration,
    total: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    bytes: result.throughput.total,
    autocannonP99Ms: result.latency.p99,
    latenciesMs: latencies.slice(0, count),
    cpuMicros: cpu.user + cpu.system,
    busyCores: (runCpu.user + runCpu.system) / runMicros,
    built: tally.built,
    collected: tally.collected,
    missingField: tally.missingField,
    failureSamples: tally.failureSamples,
    statuses: tally.statuses,
  };
}

process.once('message', (spec: LoadSpec) => {
  run(spec).then(
    (result) => process.send!({ ok: true, run: result }, () => process.exit(0)),
    (error: unknown) => process.send!({ ok: false, error: error instanceof Error ? error.stack : String(error) }, () => process.exit(1)),
  );
});
