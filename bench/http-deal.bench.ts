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
 * How (`support/api-vs-bare`): the servers run in this process; autocannon runs in a forked child
 * (`support/load-child`), so the load generator does not compete for the servers' event loop (on 2
 * cores each gets one). Each target gets an unmeasured warm-up run first; the measured time is then
 * split into rounds that alternate the two targets, so that background load on the machine falls on
 * both alike. The CPU other processes used meanwhile is printed beside the figures.
 *
 * Then the cost of metrics and rate limits: the same API against one started with METRICS=off and
 * RATE_LIMITS=off (aim: ≥ 0.95 of its req/s), alternating likewise.
 */
import { DEAL_DETAILS, DealDetails } from '@deals/catalog';
import { ViewStore } from '@deals/kernel';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunningApi } from '../apps/api/src/bootstrap';
import { alternateRounds, loadCounts, measureAgainstBare, Target } from './support/api-vs-bare';
import { runLoad } from './support/load';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { httpsGet } from './support/https-get';
import { withTempDir } from './support/temp-dir';
import { BenchApi, startBenchApi } from './support/bench-api';

/** How many demo deals the load rotates through. */
const DEAL_COUNT = 5;
/** How long to wait for the demo catalogue's views to answer after the start. */
const READY_TIMEOUT_MS = 60_000;

export async function httpDealBench(options: BenchOptions): Promise<BenchRow[]> {
  return withTempDir('http', async (dataDir) => {
    const { api, tls, origin: apiOrigin } = await startBenchApi(dataDir, 'on');
    try {
      const apiKey = (JSON.parse(readFileSync(join(dataDir, 'demo-partner.json'), 'utf8')) as { api_key: string }).api_key;
      const deals = await demoDeals(api, apiOrigin, apiKey, tls.cert);
      const bodies = new Map([...deals].map(([id, body]) => [dealPath(id, apiKey), body]));
      const {
        api: dealResult,
        bare: bareResult,
        notes,
      } = await measureAgainstBare({
        options,
        tls,
        apiOrigin,
        bodies,
        label: 'GET /deals/:id',
        rotation: `${deals.size} deal ids`,
      });
      return [
        row('GET /deals/:id (API) req/s', dealResult.okPerSec, 'req/s', 'bare Fastify 5 HTTPS route', bareResult.okPerSec, {
          aim: { min: 0.5 },
          notes,
        }),
        row('GET /deals/:id (API) p99 latency', dealResult.p99Ms, 'ms', 'bare route p99 (ratio: lower is better)', bareResult.p99Ms),
        ...(await operationsCost(options, { api, tls, origin: apiOrigin }, apiKey, deals)),
      ];
    } finally {
      await api.close();
    }
  });
}

/**
 * What metrics and rate limits cost: the same API (metrics on, budgets counted on every request)
 * against a second one started with METRICS=off and RATE_LIMITS=off on its own copy of the demo
 * catalogue, for the same deals, in alternating rounds of the same run.
 */
async function operationsCost(options: BenchOptions, withOps: BenchApi, apiKey: string, deals: Map<string, Buffer>): Promise<BenchRow[]> {
  return withTempDir('http-bare-ops', async (dataDir) => {
    const without = await startBenchApi(dataDir, 'on', { METRICS: 'off', RATE_LIMITS: 'off' });
    try {
      const keyWithout = (JSON.parse(readFileSync(join(dataDir, 'demo-partner.json'), 'utf8')) as { api_key: string }).api_key;
      await demoDeals(without.api, without.origin, keyWithout, without.tls.cert);
      const ids = [...deals.keys()];
      const targets: Record<Target, { origin: string; paths: string[]; ca: string }> = {
        api: { origin: withOps.origin, paths: ids.map((id) => dealPath(id, apiKey)), ca: withOps.tls.cert },
        bare: { origin: without.origin, paths: ids.map((id) => dealPath(id, keyWithout)), ca: without.tls.cert },
      };
      const {
        api: on,
        bare: off,
        cpu,
      } = await alternateRounds(options, (target, durationSec) =>
        runLoad({ ...targets[target], connections: options.connections, durationSec }),
      );
      for (const [name, r] of [
        ['with', on],
        ['without', off],
      ] as const)
        if (r.non2xx > 0 || r.ok === 0) throw new Error(`API ${name} metrics and rate limits: 2xx ${r.ok}, non-2xx ${r.non2xx}`);
      const notes = [
        `GET /deals/:id, the API with metrics and rate limits (as served) against one with METRICS=off RATE_LIMITS=off: ${options.connections} connections, ` +
          `${options.httpDurationSec} s measured each in ${options.httpRounds} alternating round(s); aim: under 5% fewer req/s`,
        loadCounts('  with   ', on, cpu.api),
        loadCounts('  without', off, cpu.bare),
      ];
      return [
        row(
          'GET /deals/:id with metrics + rate limits req/s',
          on.okPerSec,
          'req/s',
          'same API, METRICS=off RATE_LIMITS=off',
          off.okPerSec,
          {
            aim: { min: 0.95 },
            notes,
          },
        ),
        row('GET /deals/:id with metrics + rate limits p99', on.p99Ms, 'ms', 'without p99 (ratio: lower is better)', off.p99Ms),
      ];
    } finally {
      await without.api.close();
    }
  });
}

const dealPath = (id: string, apiKey: string) => `/deals/${encodeURIComponent(id)}?api_key=${encodeURIComponent(apiKey)}`;

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
      const answer = await httpsGet(origin + dealPath(id, apiKey), ca);
      if (answer.status === 200) found.set(id, answer.body);
      if (found.size === DEAL_COUNT) return found;
    }
    if (Date.now() > deadline) throw new Error(`the API served ${found.size} of ${DEAL_COUNT} demo deals within ${READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
