/**
 * `GET /deals/:id` of the real API, against a bare Fastify 5 HTTPS route.
 *
 * Measures: requests/s (2xx responses per second) and p99 latency of `GET /deals/:id?api_key=…`
 * served by the whole API (`startApi`: Nest, auth guard, request logging, the embedded views) on a
 * fresh data directory with the demo catalogue, for a handful of demo deal ids requested in turn on
 * every connection (autocannon `requests`).
 *
 * Against: a bare Fastify 5 route in the same process, over HTTPS with the same certificate,
 * answering the same paths with the very bytes the API returned for each deal (fetched once
 * before). Its figures are what Node, TLS and Fastify allow on this machine; the API's are shown as
 * a ratio of them (req/s aim: ≥ 0.5).
 *
 * How: the servers run in this process; autocannon runs in a forked child (`support/load-child`),
 * so the load generator does not compete for the servers' event loop (on 2 cores each gets one).
 * Each target gets an unmeasured warm-up run first; the measured time is then split into rounds
 * that alternate the two targets, so that background load on the machine falls on both alike. The
 * CPU other processes used meanwhile is printed beside the figures.
 */
import { DEAL_DETAILS, DealDetails } from '@deals/catalog';
import { ViewStore } from '@deals/kernel';
import { loadServiceConfig } from '@deals/runtime';
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { RunningApi, startApi } from '../apps/api/src/bootstrap';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { httpsGet } from './support/https-get';
import { describeInterference, CpuUse, meanCpuUse, startCpuMeter } from './support/cpu-meter';
import { LoadRun, LoadSummary, runLoad, summarize } from './support/load';
import { quietStdout } from './support/quiet-stdout';
import { withTempDir } from './support/temp-dir';

/** How many demo deals the load rotates through. */
const DEAL_COUNT = 5;
/** How long to wait for the demo catalogue's views to answer after the start. */
const READY_TIMEOUT_MS = 60_000;

const CONTENT_TYPE = 'application/json; charset=utf-8';

export async function httpDealBench(options: BenchOptions): Promise<BenchRow[]> {
  return withTempDir('http', async (dataDir) => {
    const config = loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', DEMO_DATA: 'on' });
    const { result: api } = await quietStdout(() => startApi({ config }));
    try {
      const apiKey = (JSON.parse(readFileSync(join(dataDir, 'demo-partner.json'), 'utf8')) as { api_key: string }).api_key;
      const tls = {
        cert: readFileSync(join(dataDir, 'tls', 'self-signed.crt'), 'utf8'),
        key: readFileSync(join(dataDir, 'tls', 'self-signed.key'), 'utf8'),
      };
      const apiOrigin = `https://127.0.0.1:${api.port}`;
      const deals = await demoDeals(api, apiOrigin, apiKey, tls.cert);
      const paths = [...deals.keys()].map((id) => `/deals/${encodeURIComponent(id)}?api_key=${encodeURIComponent(apiKey)}`);

      const bare = await startBare(tls, deals);
      try {
        const bareOrigin = `https://127.0.0.1:${(bare.server.address() as AddressInfo).port}`;
        for (const path of paths) {
          const [fromApi, fromBare] = await Promise.all([httpsGet(apiOrigin + path, tls.cert), httpsGet(bareOrigin + path, tls.cert)]);
          if (fromBare.status !== 200 || fromApi.status !== 200) throw new Error(`${path}: API answered ${fromApi.status}, bare route ${fromBare.status}`);
          // Same bytes as fetched once before, give or take the few that time-dependent fields of the
          // API's answer (state, counts) may have changed since.
          if (Math.abs(fromApi.body.length - fromBare.body.length) > 16) {
            throw new Error(`${path}: API body ${fromApi.body.length} B, bare body ${fromBare.body.length} B`);
          }
        }
        const spec = (origin: string, durationSec: number) => ({ origin, paths, connections: options.connections, ca: tls.cert, durationSec });
        const targets = { bare: bareOrigin, api: apiOrigin };
        // Unmeasured warm-up of each, then the measured time split into rounds that alternate the
        // two (bare-API, API-bare, …), so that a change in background load falls on both alike.
        for (const origin of Object.values(targets)) await runLoad(spec(origin, options.httpWarmupSec));
        const runs: Record<keyof typeof targets, LoadRun[]> = { bare: [], api: [] };
        const cpu: Record<keyof typeof targets, Array<CpuUse | null>> = { bare: [], api: [] };
        const roundSec = options.httpDurationSec / options.httpRounds;
        for (let round = 0; round < options.httpRounds; round++) {
          const order: Array<keyof typeof targets> = round % 2 === 0 ? ['bare', 'api'] : ['api', 'bare'];
          for (const target of order) {
            const meter = startCpuMeter();
            const run = await runLoad(spec(targets[target], roundSec));
            cpu[target].push(meter(run.cpuMicros));
            runs[target].push(run);
          }
        }
        const bareResult = summarize(runs.bare);
        const dealResult = summarize(runs.api);
        for (const [name, r] of [['API', dealResult], ['bare route', bareResult]] as const) {
          if (r.ok === 0) throw new Error(`${name}: no 2xx response (non-2xx ${r.non2xx}, errors ${r.errors})`);
        }

        const bodySizes = [...deals.values()].map((b) => b.length);
        const conditions =
          `GET /deals/:id: ${options.connections} connections, pipelining 1, ${options.httpWarmupSec} s warm-up each, then ${options.httpDurationSec} s measured each ` +
          `in ${options.httpRounds} alternating round(s); ${deals.size} deal ids requested in turn (autocannon requests), bodies ${Math.min(...bodySizes)}–${Math.max(...bodySizes)} B`;
        const counts = (name: string, r: LoadSummary, use: CpuUse | null) =>
          `${name}: ${r.total} requests, 2xx ${r.ok}, non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}; ` +
          `latency p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms (autocannon's whole-ms p99 ${r.autocannonP99Ms}), max ${r.maxMs.toFixed(1)} ms; ` +
          `${(r.bytesPerSec / 1e6).toFixed(1)} MB/s` +
          `; CPU: ${use ? `server process ${use.ownCores.toFixed(2)} cores, ` : ''}load generator ${r.loadGeneratorCores.toFixed(2)}` +
          `${r.loadGeneratorCores > 0.9 ? ' (saturated: here the load generator is the limit)' : ''}; ` +
          describeInterference(use);
        return [
          row('GET /deals/:id (API) req/s', dealResult.okPerSec, 'req/s', 'bare Fastify 5 HTTPS route', bareResult.okPerSec, {
            aim: { min: 0.5 },
            notes: [
              conditions,
              counts('  API ', dealResult, meanCpuUse(cpu.api)),
              counts('  bare', bareResult, meanCpuUse(cpu.bare)),
            ],
          }),
          row('GET /deals/:id (API) p99 latency', dealResult.p99Ms, 'ms', 'bare route p99 (ratio: lower is better)', bareResult.p99Ms),
        ];
      } finally {
        await bare.close();
      }
    } finally {
      await api.close();
    }
  });
}

/**
 * Waits for the demo catalogue's views to answer, then returns the first {@link DEAL_COUNT} deals
 * the API serves with 200, each with the exact body it returned.
 */
async function demoDeals(api: RunningApi, origin: string, apiKey: string, ca: string): Promise<Map<string, Buffer>> {
  const views = api.app.get(ViewStore);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const found = new Map<string, Buffer>();
    const candidates = await views.find<DealDetails>(DEAL_DETAILS, {}, { sort: { _id: 1 }, limit: 50 });
    for (const { _id: id } of candidates) {
      const answer = await httpsGet(`${origin}/deals/${encodeURIComponent(id)}?api_key=${encodeURIComponent(apiKey)}`, ca);
      if (answer.status === 200) found.set(id, answer.body);
      if (found.size === DEAL_COUNT) return found;
    }
    if (Date.now() > deadline) throw new Error(`the API served ${found.size} of ${DEAL_COUNT} demo deals within ${READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The reference: a bare Fastify 5 HTTPS route that answers each deal path with its stored bytes. */
async function startBare(tls: { cert: string; key: string }, bodies: Map<string, Buffer>) {
  const app = Fastify({ https: tls, logger: false });
  app.get<{ Params: { deal_id: string } }>('/deals/:deal_id', (request, reply) => {
    const body = bodies.get(request.params.deal_id);
    if (!body) return reply.code(404).send();
    return reply.header('content-type', CONTENT_TYPE).send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}
