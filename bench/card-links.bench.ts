/**
 * Card links made per second on one hot card-linked deal (`POST /card_links`), against a bare
 * Fastify 5 HTTPS POST route of the same run.
 *
 * Setup: the whole API (`startApi`) on a fresh data directory without demo data, one partner
 * (`CreatePartner`; every call uses its `api_key`), the demo regions, and two card-linked deals of
 * the first active region (in flight, `max_linkage` 1,000,000, so every link goes through the
 * deal's places): one for the warm-up, one hot for the measured run; {@link usersFor} users made
 * with `POST /users`, {@link SETUP_CONCURRENCY} at a time, before anything is measured.
 *
 * Measures, with {@link CONNECTIONS} connections (autocannon in a forked child, HTTPS, pipelining 1),
 * body `{user_id, deal_id}` where request n names user n: each request links a user that has no
 * link on the deal yet (a new place on the deal's linkage stream, and the link's own stream opened)
 * while the users last; the note says how many of the answers were new links. A warm-up run on the
 * warm deal, then the measured run on the hot deal.
 *
 * Against: the bare POST route (`support/bare-route`, the API's certificate) answering every
 * request with the bytes the API answered to one link, loaded the same way right before the hot
 * run. The aim: at least the ratio of stored-card purchases on one hot deal to their bare route
 * (the purchases bench's row, when it ran in the same `npm run bench`).
 *
 * Checks after the hot run (no lost or extra link): the hot deal's places in the log (folded here)
 * equal the links in the `card_link_details` view, and are at least the new links answered.
 */
import { CreatePartner } from '@deals/accounts';
import { CARD_LINK_DETAILS } from '@deals/engagement';
import { EventStore, OPERATOR, ViewStore } from '@deals/kernel';
import { CatalogueImport, DealImportRecord, ProjectionHost } from '@deals/runtime';
import { demoRegions } from '@deals/runtime/demo/demo-catalogue';
import { CommandBus } from '@nestjs/cqrs';
import { Agent } from 'node:https';
import { performance } from 'node:perf_hooks';
import { startBarePostRoute } from './support/bare-route';
import { startBenchApi } from './support/bench-api';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { httpsPostJson } from './support/https-get';
import { LoadRun, runLoad, summarize } from './support/load';
import { withTempDir } from './support/temp-dir';

const CONNECTIONS = 50;
const SETUP_CONCURRENCY = 50;
const DAY_MS = 86_400_000;
/** The row whose ratio this bench aims at (`run-all` fills it in when both ran). */
export const PURCHASES_HOT_BARE_ROW = 'POST /purchases, one hot deal, against the bare route';

/** Users enough for every request of a run at up to 12,000 links/s to link a new one. */
const usersFor = (options: BenchOptions) => Math.max(options.httpDurationSec, options.httpWarmupSec) * 12_000;

export async function cardLinksBench(options: BenchOptions): Promise<BenchRow[]> {
  return withTempDir('card-links', async (dataDir) => {
    const { api, tls, origin } = await startBenchApi(dataDir);
    try {
      const app = api.app;
      const partner = await app.get(CommandBus).execute(new CreatePartner('Card links bench partner', 'partner', OPERATOR));
      const regions = demoRegions();
      await app.get(CatalogueImport).regions(regions, OPERATOR);
      const region = regions.find((r) => r.active)!;
      const now = Date.now();
      const deal = (id: string): DealImportRecord => ({
        id,
        title: 'Spend $20, get $5 back',
        type: 'card-linked',
        state: 'in-flight',
        current_price: 0,
        value: 500,
        start_at: new Date(now - DAY_MS).toISOString(),
        end_at: new Date(now + 7 * DAY_MS).toISOString(),
        fulfillment_method: 'redemptioncoded',
        region_id: region.id,
        merchant_id: 'bench-merchant',
        incentive_amount: 500,
        min_spend: 2000,
        max_linkage: 1_000_000,
        num_qualifying: 1,
        quantity: 0,
      });
      const report = await app.get(CatalogueImport).deals([deal('bench-warm-link'), deal('bench-hot-link')], OPERATOR);
      if (report.outcomes.some((o) => !o.ok)) throw new Error(`deal import refused: ${JSON.stringify(report.outcomes)}`);
      const apiKey = encodeURIComponent(partner.apiKey);
      const t0 = performance.now();
      const users = await makeUsers(origin, tls.cert, apiKey, usersFor(options));
      await app.get(ProjectionHost).waitForAll();
      const setupSec = (performance.now() - t0) / 1000;

      const bodies = (dealId: string) => users.map((user_id) => JSON.stringify({ user_id, deal_id: dealId }));
      const load = (target: string, dealId: string, durationSec: number) =>
        runLoad({
          origin: target,
          paths: [`/card_links?api_key=${apiKey}`],
          connections: CONNECTIONS,
          ca: tls.cert,
          durationSec,
          post: { template: '{item}', items: bodies(dealId) },
        });
      const warm = await load(origin, 'bench-warm-link', options.httpWarmupSec);
      await app.get(ProjectionHost).waitForAll();

      // The bare route answers with the bytes of one real link (of the warm deal, made outside the runs).
      const probe = await httpsPostJson(`${origin}/card_links?api_key=${apiKey}`, tls.cert, {
        user_id: users[0],
        deal_id: 'bench-warm-link',
      });
      if (probe.status !== 200) throw new Error(`POST /card_links: ${probe.status} ${probe.body.toString('utf8').slice(0, 300)}`);
      const bare = await startBarePostRoute(tls, '/card_links', probe.body);
      let bareRuns: LoadRun[];
      try {
        bareRuns = [
          await load(bare.origin, 'bench-hot-link', options.httpWarmupSec),
          await load(bare.origin, 'bench-hot-link', options.httpDurationSec),
        ];
      } finally {
        await bare.close();
      }
      const hot = await load(origin, 'bench-hot-link', options.httpDurationSec);
      await app.get(ProjectionHost).waitForAll();
      for (const [name, r] of [
        ['warm-up', warm],
        ['hot', hot],
      ] as const)
        if (r.ok === 0)
          throw new Error(
            `POST /card_links (${name}): no 2xx (statuses ${JSON.stringify(r.statuses)}; e.g. ${r.failureSamples.join(' | ')})`,
          );

      const places = new Set<string>();
      for (const e of await app.get(EventStore).readStream('cardlinkage-bench-hot-link')) {
        const { userId } = e.data as { userId: string };
        if (e.type === 'CardLinkPlaceTaken') places.add(userId);
        if (e.type === 'CardLinkPlaceReturned') places.delete(userId);
      }
      const viewed = await app.get(ViewStore).count(CARD_LINK_DETAILS, { dealId: 'bench-hot-link', withdrawn: false });
      const fresh = Math.min(hot.ok, users.length);
      const agree = places.size === viewed && places.size >= fresh;
      const summary = summarize([hot]);
      const bareSummary = summarize([bareRuns[1]]);
      return [
        row(
          `POST /card_links, one hot card-linked deal, links/s${agree ? '' : ' (LOG AND VIEW DISAGREE?)'}`,
          summary.okPerSec,
          'links/s',
          `bare Fastify 5 HTTPS POST route, ${CONNECTIONS} connections`,
          bareSummary.okPerSec,
          {
            limitUnit: 'req/s',
            aim: { atLeastRatioOf: PURCHASES_HOT_BARE_ROW },
            notes: [
              `POST /card_links {user_id, deal_id} on the real API over HTTPS: ${CONNECTIONS} connections, pipelining 1, ${options.httpWarmupSec} s warm-up (another deal) then ${options.httpDurationSec} s measured on the hot deal; ` +
                `request n links user n of ${users.length} (made with POST /users, ${SETUP_CONCURRENCY} at a time, in ${setupSec.toFixed(1)} s, not measured): ${fresh} of the ${hot.ok} 2xx answers were new links; ` +
                `statuses ${JSON.stringify(hot.statuses)}, errors ${hot.errors}; p99 ${summary.p99Ms.toFixed(1)} ms`,
              `  the hot deal after the run: ${places.size} places in its linkage stream, ${viewed} links in the card_link_details view`,
              `  bare route right before the hot run: the same bodies, answered with the API's ${probe.body.length} B answer to one link; ${bareSummary.okPerSec.toFixed(0)} req/s`,
            ],
          },
        ),
        row(
          'POST /card_links, one hot card-linked deal, p99 latency',
          summary.p99Ms,
          'ms',
          'bare route p99 (ratio: lower is better)',
          bareSummary.p99Ms,
        ),
      ];
    } finally {
      await api.close();
    }
  });
}

/** `count` users made over HTTPS, {@link SETUP_CONCURRENCY} at a time. */
async function makeUsers(origin: string, ca: string, apiKey: string, count: number): Promise<string[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: SETUP_CONCURRENCY });
  const tag = Date.now().toString(36);
  const users: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const answer = await httpsPostJson(`${origin}/users?api_key=${apiKey}`, ca, { email: `linker${i}-${tag}@bench.test` }, {}, agent);
      const id = answer.status === 200 ? (JSON.parse(answer.body.toString('utf8')) as { user_id?: string }).user_id : undefined;
      if (!id) throw new Error(`POST /users: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
      users[i] = id;
    }
  };
  try {
    await Promise.all(Array.from({ length: SETUP_CONCURRENCY }, worker));
  } finally {
    agent.destroy();
  }
  return users;
}
