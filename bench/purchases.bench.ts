/**
 * Stored-card purchases of the real API (`POST /purchases`), against the raw append rate of the
 * same embedded event store.
 *
 * Setup: the whole API (`startApi`, as the accounts bench starts it: Nest, auth, request logging,
 * the embedded event store and views, the simulated payment gateway) on a fresh data directory
 * without demo data, one partner (`CreatePartner`; every call uses its `api_key`); the demo regions
 * and {@link MANY_DEALS} + 1 deals built from `demoDeals` (daily deals, in flight since a day, on
 * sale for a week more, quantity {@link DEAL_QUANTITY}, no max_per_user, not shipped) imported with
 * `CatalogueImport`; {@link USERS} users made with `POST /users` and one card each (4242424242424242,
 * approved by the simulated processor) with `POST /credit_cards`, {@link SETUP_CONCURRENCY} calls at
 * a time, all before anything is measured.
 *
 * Measures, with {@link CONNECTIONS} connections (autocannon in a forked child, HTTPS, pipelining 1),
 * body `{deal_id, quantity: 1, user_id, credit_card_id, expected_price_per_unit}` made per request:
 * - purchases/s on many deals: request n buys deal n mod {@link MANY_DEALS} for user n mod
 *   {@link USERS}; a warm-up run, then the measured run;
 * - purchases/s on one hot deal: every request buys the same (otherwise unused) deal, users in the
 *   same round-robin; a warm-up run, then the measured run;
 * - the same on the hot deal once {@link OPEN_RESERVATIONS} reservations of one unit are left open
 *   on it (`POST /purchases/reserve`, not measured): five-minute holds, all live during the run,
 *   against the hot deal's own rate without them (aim: at least {@link OPEN_HOLDS_AIM} of it). Open
 *   holds must not make each sale slower (a popular deal has thousands during a sale).
 * With round-robin over {@link USERS} users and {@link CONNECTIONS} in flight, one user has a second
 * purchase sent only after {@link USERS} − {@link CONNECTIONS} others, so 409 already_charging (one
 * charge at a time per user: not a service error) is rare; 409s are counted apart.
 *
 * Against: the raw append rate of the same event store (`SqliteEventStore` on a fresh file in the
 * same temporary directory, i.e. the same disk, WAL + synchronous=FULL, group commit), single-event
 * appends from {@link CONNECTIONS} concurrent clients, as `event-store.bench.ts` measures it, run in
 * this process before the API starts. A purchase appends about 8 events in 7 commands, which wait
 * for 3 commits one after the other (charge lock begin + reserve + hold; sell; paid + coupon +
 * charge lock end) and one write of the processor's vault, so a purchase rate near 1/8 of the
 * append rate would mean the store's commit is the limit.
 *
 * Against, also: a bare Fastify 5 HTTPS POST route (`support/bare-route`, the API's certificate)
 * that answers every purchase request with the bytes the API answered to one purchase, loaded the
 * same way ({@link CONNECTIONS} connections, the same bodies, warm-up then measured) right before the
 * hot deal's run. It is what Node, TLS and Fastify allow on this machine at that moment for such a
 * call and answer: this machine's speed moves by more than half within minutes, and this ratio
 * tells a slow phase of the machine from a slow build.
 *
 * Checks after the hot-deal runs (no oversell): `GET /deals/:id` of the hot deal must show
 * `number_sold` = the purchases the server fulfilled on it (its purchase-details view), which must be
 * at least the 200 answers and at most that plus the requests cut off unanswered by the end of the
 * runs; and `num_left` = quantity − number_sold − the units of the open reservations. The issue's aim: at least {@link HOT_AIM}
 * purchases/s on the one hot deal on this 2-core machine.
 */
import { CreatePartner } from '@deals/accounts';
import { SqliteEventStore } from '@deals/adapters';
import { EventStore, OPERATOR, ViewStore } from '@deals/kernel';
import { PURCHASE_DETAILS } from '@deals/purchasing';
import { CatalogueImport, DealImportRecord, ImportReport, ProjectionHost } from '@deals/runtime';
import { CommandBus } from '@nestjs/cqrs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunningApi } from '../apps/api/src/bootstrap';
// Not re-exported by @deals/runtime's index; the demo seed's own generator.
import { demoDeals, demoRegions } from '@deals/runtime/demo/demo-catalogue';
import { loadCounts } from './support/api-vs-bare';
import { startBarePostRoute, TlsMaterial } from './support/bare-route';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { startCpuMeter } from './support/cpu-meter';
import { cardBody } from './accounts.bench';
import { groupCommitAppends } from './event-store.bench';
import { httpsGet, httpsPostJson } from './support/https-get';
import { LoadRun, LoadSummary, runLoad, summarize } from './support/load';
import { withTempDir } from './support/temp-dir';
import { startBenchApi } from './support/bench-api';

export const CONNECTIONS = 50;
export const USERS = 500;
export const MANY_DEALS = 200;
const DEAL_QUANTITY = 1_000_000;
const SETUP_CONCURRENCY = 20;
/** Purchases/s the issue aims at on one hot deal. */
const HOT_AIM = 1000;
/** The hot purchase with an Idempotency-Key on every request should keep at least this share of its rate without. */
const KEYED_AIM = 0.9;
const KEYED_PAIRS = 3;
/** Reservations (five-minute holds of one unit) left open on the hot deal for its last run. */
const OPEN_RESERVATIONS = 3000;
/** The hot deal with that many open holds should sell at least this share of its rate without them. */
const OPEN_HOLDS_AIM = 0.8;
/** Events a fulfilled stored-card purchase appends (for the conditions). */
const APPENDS_PER_PURCHASE = 8;
const CARD_NUMBER = '4242424242424242';
const DAY_MS = 86_400_000;

export interface PurchasesSession {
  api: RunningApi;
  /** The API's certificate and key (the bare route serves with them). */
  tls: TlsMaterial;
  ca: string;
  origin: string;
  apiKey: string;
  /** The many deals, then the hot one last, with their prices. */
  deals: Array<{ id: string; price: number }>;
  hot: { id: string; price: number };
  /** Users with their stored card. */
  buyers: Array<{ userId: string; cardId: string }>;
  setupNote: string;
}

export async function purchasesBench(options: BenchOptions): Promise<BenchRow[]> {
  return withTempDir('purchases', async (dataDir) => {
    const appends = await appendLimit(dataDir, options);
    const session = await startPurchasesApi(dataDir);
    try {
      const many = await measure(session, options, 'many');
      const bare = await measureBareRoute(session, options);
      const hot = await measure(session, options, 'hot');
      const reserving = await openReservations(session, OPEN_RESERVATIONS);
      const held = await measure(session, options, 'hot');
      const keyed = await keyedAgainstPlain(session, options);
      const check = await oversellCheck(session, [...hot.runs, ...held.runs, ...keyed.runs], OPEN_RESERVATIONS);
      const limitName = `event store raw appends, ${CONNECTIONS} concurrent clients`;
      const conditions = [
        `POST /purchases (stored card, api_key) on the real API over HTTPS: ${CONNECTIONS} connections, pipelining 1, ${options.httpWarmupSec} s warm-up then ${options.httpDurationSec} s measured per run; ` +
          `quantity 1, expected_price_per_unit = the deal's current_price; request n is for user n mod ${USERS} (each with one stored card ${CARD_NUMBER}, approved by the simulated processor); ` +
          `limit: ${appends.count} single-event appends (expected revision checked, one stream per client) from ${CONNECTIONS} concurrent clients on a SqliteEventStore ` +
          `(WAL, synchronous=FULL, group commit) in the same temp dir, in this process before the API started: ${appends.perSec.toFixed(0)} appends/s, ` +
          `append latency p50 ${appends.p50Ms.toFixed(2)} ms, p99 ${appends.p99Ms.toFixed(2)} ms; a purchase appends ~${APPENDS_PER_PURCHASE} events in 7 commands ` +
          `waiting for 3 commits one after the other (charge-lock begin + reserve + hold; sell; paid + coupon + charge-lock end) and one vault write, so a ratio near ${(1 / APPENDS_PER_PURCHASE).toFixed(3)} would mean the append rate is the limit`,
        session.setupNote,
      ];
      return [
        row(`POST /purchases, ${MANY_DEALS} deals, purchases/s`, many.summary.okPerSec, 'purchases/s', limitName, appends.perSec, {
          limitUnit: 'appends/s',
          notes: [...conditions, ...runNotes(`many deals (deal n mod ${MANY_DEALS})`, many)],
        }),
        row(
          `POST /purchases, ${MANY_DEALS} deals, p99 latency`,
          many.summary.p99Ms,
          'ms',
          'raw append p99 (ratio: lower is better)',
          appends.p99Ms,
        ),
        row(
          `POST /purchases, one hot deal, purchases/s${check.ok ? '' : ' (OVERSOLD?)'}`,
          hot.summary.okPerSec,
          'purchases/s',
          limitName,
          appends.perSec,
          {
            limitUnit: 'appends/s',
            aim: { absoluteMin: HOT_AIM },
            notes: [...runNotes(`one hot deal (${session.hot.id})`, hot), ...check.notes],
          },
        ),
        row(
          'POST /purchases, one hot deal, p99 latency',
          hot.summary.p99Ms,
          'ms',
          'raw append p99 (ratio: lower is better)',
          appends.p99Ms,
        ),
        row(
          'POST /purchases, one hot deal, against the bare route',
          hot.summary.okPerSec,
          'purchases/s',
          `bare Fastify 5 HTTPS POST route, ${CONNECTIONS} connections`,
          bare.summary.okPerSec,
          {
            limitUnit: 'req/s',
            notes: bare.notes,
          },
        ),
        row(
          `POST /purchases, hot deal + ${OPEN_RESERVATIONS.toLocaleString('en-US')} open holds, purchases/s`,
          held.summary.okPerSec,
          'purchases/s',
          'the same hot deal without them, this run',
          hot.summary.okPerSec,
          {
            limitUnit: 'purchases/s',
            aim: { min: OPEN_HOLDS_AIM },
            notes: [
              `  the hot deal again after ${OPEN_RESERVATIONS.toLocaleString('en-US')} reservations of one unit each (POST /purchases/reserve, ${SETUP_CONCURRENCY} at a time over kept-alive connections, ` +
                `${(reserving / 1000).toFixed(1)} s, not measured) are left open on it: five-minute holds, all live during the run`,
              ...runNotes(`one hot deal with open holds (${session.hot.id})`, held),
            ],
          },
        ),
        row(
          'POST /purchases, hot deal, an Idempotency-Key on every request, purchases/s',
          keyed.keyed,
          'purchases/s',
          'the same without keys, alternating runs',
          keyed.plain,
          { limitUnit: 'purchases/s', aim: { min: KEYED_AIM }, notes: keyed.notes },
        ),
      ];
    } finally {
      await session.api.close();
    }
  });
}

/** Keyed and plain runs on the hot deal, alternating; each side's median rate and the runs (for the oversell check). */
async function keyedAgainstPlain(session: PurchasesSession, options: BenchOptions) {
  const pairs = options.quick ? 1 : KEYED_PAIRS;
  const rates = { plain: [] as number[], keyed: [] as number[] };
  const runs: LoadRun[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    // Alternating which goes first, so that neither always runs on the warmer (or more loaded) half.
    for (const keyed of pair % 2 === 0 ? [false, true] : [true, false]) {
      const measured = await measure(session, options, 'hot', { keyed });
      rates[keyed ? 'keyed' : 'plain'].push(measured.summary.okPerSec);
      runs.push(...measured.runs);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const ratios = rates.keyed.map((rate, i) => (rate / rates.plain[i]).toFixed(2)).join(', ');
  return {
    keyed: median(rates.keyed),
    plain: median(rates.plain),
    runs,
    notes: [
      `  the hot deal (its open holds still there) in ${pairs} alternating pair(s) of runs: every request with an Idempotency-Key of its own (a new key: ` +
        `claimed, run, its answer sealed and written to idempotency.sqlite before it is sent) against none; keyed/plain per pair ${ratios}; medians shown`,
    ],
  };
}

/** Opens `count` reservations of one unit on the hot deal ({@link SETUP_CONCURRENCY} at a time); returns the milliseconds taken. */
async function openReservations(session: PurchasesSession, count: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: SETUP_CONCURRENCY });
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next++ < count) {
      const answer = await httpsPostJson(
        `${session.origin}/purchases/reserve?api_key=${session.apiKey}`,
        session.ca,
        { deal_id: session.hot.id, num_bought: 1 },
        {},
        agent,
      );
      if (answer.status !== 200) throw new Error(`POST /purchases/reserve: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: SETUP_CONCURRENCY }, worker));
  } finally {
    agent.destroy();
  }
  await settle(session);
  return performance.now() - t0;
}

/** The raw append rate of the embedded store on a fresh file in `dir`, {@link CONNECTIONS} clients. */
async function appendLimit(dir: string, options: BenchOptions) {
  const store = new SqliteEventStore(join(dir, 'raw-appends.sqlite'));
  try {
    return await groupCommitAppends(store, { appends: options.appends, appendClients: CONNECTIONS });
  } finally {
    await store.close();
  }
}

/** The deals: demo daily/on-going deals, not shipped, in active regions, turned into long-running daily deals with a large stock. */
export function benchDeals(now: Date, count: number): DealImportRecord[] {
  const active = new Set(
    demoRegions()
      .filter((r) => r.active)
      .map((r) => r.id),
  );
  const picked = demoDeals(now, count * 4)
    .filter(
      (d) =>
        (d.type === 'daily-deal' || d.type === 'on-going') &&
        d.fulfillment_method !== 'shipped' &&
        active.has(d.region_id) &&
        d.current_price > 0,
    )
    .slice(0, count);
  if (picked.length < count) throw new Error(`only ${picked.length} demo deals fit, ${count} wanted`);
  const iso = (ms: number) => new Date(ms).toISOString();
  return picked.map(({ max_per_user: _limit, ...d }) => ({
    ...d,
    type: 'daily-deal',
    state: 'in-flight',
    start_at: iso(now.getTime() - DAY_MS),
    end_at: iso(now.getTime() + 7 * DAY_MS),
    expires_at: iso(now.getTime() + 365 * DAY_MS),
    quantity: DEAL_QUANTITY,
  }));
}

/**
 * Starts the API on `dataDir` (with `env` added to its configuration) with one partner, the deals,
 * and the users with their cards; the caller closes it.
 */
export async function startPurchasesApi(dataDir: string, env: Record<string, string> = {}): Promise<PurchasesSession> {
  const { api, tls, origin } = await startBenchApi(dataDir, 'off', env);
  try {
    const ca = tls.cert;
    const t0 = performance.now();
    const partner = await api.app.get(CommandBus).execute(new CreatePartner('Purchases bench partner', 'partner', OPERATOR));
    const imports = api.app.get(CatalogueImport);
    refusals('region', await imports.regions(demoRegions(), OPERATOR));
    const records = benchDeals(new Date(), MANY_DEALS + 1);
    refusals('deal', await imports.deals(records, OPERATOR));
    await api.app.get(ProjectionHost).waitForAll();
    const t1 = performance.now();
    const apiKey = encodeURIComponent(partner.apiKey);
    const deals: Array<{ id: string; price: number }> = [];
    for (const record of records) {
      const answer = await httpsGet(`${origin}/deals/${encodeURIComponent(record.id)}?api_key=${apiKey}`, ca);
      const deal =
        answer.status === 200
          ? (JSON.parse(answer.body.toString('utf8')) as { deal?: { current_price?: number; num_left?: number } }).deal
          : undefined;
      if (!deal || deal.current_price !== record.current_price || deal.num_left !== DEAL_QUANTITY) {
        throw new Error(
          `GET /deals/${record.id}: expected 200 with price ${record.current_price} and ${DEAL_QUANTITY} left, got ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`,
        );
      }
      deals.push({ id: record.id, price: record.current_price });
    }
    const buyers = await makeBuyers(origin, ca, apiKey, USERS);
    await api.app.get(ProjectionHost).waitForAll();
    const t2 = performance.now();
    const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    return {
      api,
      tls,
      ca,
      origin,
      apiKey,
      deals,
      hot: deals[deals.length - 1],
      buyers,
      setupNote:
        `setup (not measured): ${demoRegions().length} regions + ${records.length} deals (demo deals made daily deals, in flight, quantity ${DEAL_QUANTITY.toLocaleString('en-US')}, ` +
        `no max_per_user; ${MANY_DEALS} for the many-deals run, 1 hot) imported in ${sec(t1 - t0)}; ${buyers.length} users + cards over HTTPS, ${SETUP_CONCURRENCY} at a time, in ${sec(t2 - t1)}`,
    };
  } catch (error) {
    await api.close();
    throw error;
  }
}

function refusals(kind: string, report: ImportReport): void {
  const refused = report.outcomes.filter((o) => !o.ok);
  if (refused.length) throw new Error(`${refused.length} ${kind}(s) refused by the import, e.g. ${JSON.stringify(refused.slice(0, 3))}`);
}

/** `count` users, each with one stored card, made over HTTPS {@link SETUP_CONCURRENCY} at a time. */
export async function makeBuyers(origin: string, ca: string, apiKey: string, count: number) {
  const tag = Date.now().toString(36);
  const buyers: Array<{ userId: string; cardId: string }> = new Array(count);
  let next = 0;
  const post = async (path: string, body: unknown, field: string) => {
    const answer = await httpsPostJson(`${origin}${path}?api_key=${apiKey}`, ca, body);
    const value = answer.status === 200 ? (JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>)[field] : undefined;
    if (typeof value !== 'string')
      throw new Error(`POST ${path}: expected 200 with ${field}, got ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
    return value;
  };
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const userId = await post(
        '/users',
        { email: `buyer${i}-${tag}@bench.test`, first_name: 'Bench', last_name: `Buyer ${i}` },
        'user_id',
      );
      const cardId = await post('/credit_cards', cardBody(userId), 'credit_card_id');
      buyers[i] = { userId, cardId };
    }
  };
  await Promise.all(Array.from({ length: SETUP_CONCURRENCY }, worker));
  return buyers;
}

/** One request body per item: request n takes item n (wrapping), so user n mod USERS and the run's deal choice. */
function purchaseItems(session: PurchasesSession, mode: 'many' | 'hot'): string[] {
  return purchaseBodies(session.buyers, session.deals.slice(0, MANY_DEALS), session.hot, mode);
}

/**
 * The purchase request bodies of a run, one an item: item n is for buyer n mod buyers (quantity 1,
 * the deal's price expected) and buys the hot deal (`hot`) or deal n mod `many.length` (`many`);
 * a whole number of buyer rounds, so that the load generator's wrapping round keeps the round-robin.
 */
export function purchaseBodies(
  buyers: ReadonlyArray<{ userId: string; cardId: string }>,
  many: ReadonlyArray<{ id: string; price: number }>,
  hot: { id: string; price: number },
  mode: 'many' | 'hot',
): string[] {
  const length = mode === 'hot' ? buyers.length : (buyers.length * many.length) / gcd(buyers.length, many.length);
  return Array.from({ length }, (_, n) => {
    const buyer = buyers[n % buyers.length];
    const deal = mode === 'hot' ? hot : many[n % many.length];
    return JSON.stringify({
      deal_id: deal.id,
      quantity: 1,
      user_id: buyer.userId,
      credit_card_id: buyer.cardId,
      expected_price_per_unit: deal.price,
    });
  });
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

interface Measured {
  summary: LoadSummary;
  /** Warm-up run, then the measured one. */
  runs: LoadRun[];
  cpu: ReturnType<ReturnType<typeof startCpuMeter>>;
}

/** A warm-up run, then the measured run, of purchases on many deals or on the hot deal. */
export async function measure(
  session: PurchasesSession,
  options: BenchOptions,
  mode: 'many' | 'hot',
  { keyed = false, connections = CONNECTIONS }: { keyed?: boolean; connections?: number } = {},
): Promise<Measured> {
  const items = purchaseItems(session, mode);
  let loads = 0;
  const load = (durationSec: number) =>
    runLoad({
      origin: session.origin,
      paths: [`/purchases?api_key=${session.apiKey}`],
      connections,
      ca: session.ca,
      durationSec,
      // A key of its own for every request: the load generator numbers requests from 0 in each
      // run, so each run's prefix is new (a key of the warm-up sent again would be a replay).
      post: { template: '{item}', items, idempotencyKeyPrefix: keyed ? `bench-${process.pid}-${Date.now()}-${loads++}-` : undefined },
    });
  const warm = await load(options.httpWarmupSec);
  await settle(session);
  const meter = startCpuMeter();
  const run = await load(options.httpDurationSec);
  const cpu = meter(run.cpuMicros);
  await settle(session);
  const runs = [warm, run];
  for (const r of runs) {
    if (r.ok === 0)
      throw new Error(
        `POST /purchases (${mode}): no 2xx (statuses ${JSON.stringify(r.statuses)}, errors ${r.errors}; e.g. ${r.failureSamples.join(' | ')})`,
      );
  }
  return { summary: summarize([run]), runs, cpu };
}

/**
 * The bare POST route's rate for the purchase requests of the hot run (the same bodies and
 * connections), answering each with the bytes the API answered to one purchase of the first of the
 * many deals (made here, outside the measured runs): a warm-up run, then the measured one.
 */
async function measureBareRoute(session: PurchasesSession, options: BenchOptions): Promise<{ summary: LoadSummary; notes: string[] }> {
  const [buyer] = session.buyers;
  const [deal] = session.deals;
  const probe = await httpsPostJson(`${session.origin}/purchases?api_key=${session.apiKey}`, session.ca, {
    deal_id: deal.id,
    quantity: 1,
    user_id: buyer.userId,
    credit_card_id: buyer.cardId,
    expected_price_per_unit: deal.price,
  });
  if (probe.status !== 200)
    throw new Error(`POST /purchases (the bare route's answer): ${probe.status} ${probe.body.toString('utf8').slice(0, 300)}`);
  await settle(session);
  const bare = await startBarePostRoute(session.tls, '/purchases', probe.body);
  try {
    const items = purchaseItems(session, 'hot');
    const load = (durationSec: number) =>
      runLoad({
        origin: bare.origin,
        paths: [`/purchases?api_key=${session.apiKey}`],
        connections: CONNECTIONS,
        ca: session.ca,
        durationSec,
        post: { template: '{item}', items },
      });
    const warm = await load(options.httpWarmupSec);
    const meter = startCpuMeter();
    const run = await load(options.httpDurationSec);
    const cpu = meter(run.cpuMicros);
    for (const r of [warm, run]) {
      if (r.ok === 0 || r.ok !== r.total)
        throw new Error(`bare POST route: ${r.ok} of ${r.total} answered 2xx (errors ${r.errors}; e.g. ${r.failureSamples.join(' | ')})`);
    }
    const summary = summarize([run]);
    return {
      summary,
      notes: [
        `  bare Fastify 5 HTTPS POST route, right before the hot deal's run: the hot run's request bodies, ${CONNECTIONS} connections, pipelining 1, ` +
          `${options.httpWarmupSec} s warm-up then ${options.httpDurationSec} s measured; each answered with the API's ${probe.body.length} B answer to one purchase ` +
          `(what Node, TLS and Fastify allow for this call on this machine at that moment; the machine's speed moves within minutes)`,
        loadCounts('    bare', summary, cpu),
      ],
    };
  } finally {
    await bare.close();
  }
}

/** How long the log must stay still for the server to count as idle, and how long that may take at most. */
const QUIET_MS = 500;
const SETTLE_TIMEOUT_MS = 120_000;

/**
 * Lets the purchases cut off by the end of a run finish on the server (every request it received
 * answered, then the log head still for {@link QUIET_MS}) and the views catch up. A quiet log alone
 * is no proof: a purchase may be between its hold and its sale for longer (a slow charge, a write
 * tried again), and a check then finds its unit held.
 */
export async function settle(session: PurchasesSession): Promise<void> {
  if (!(await session.api.requestsInFlight.drained(SETTLE_TIMEOUT_MS)))
    throw new Error(
      `the server was still working on ${session.api.requestsInFlight.size} requests ${SETTLE_TIMEOUT_MS} ms after the load stopped`,
    );
  const store = session.api.app.get(EventStore);
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let head = await store.head();
  for (;;) {
    await sleep(QUIET_MS);
    const now = await store.head();
    if (now === head) break;
    if (Date.now() > deadline) throw new Error(`the server was still appending ${SETTLE_TIMEOUT_MS} ms after the load stopped`);
    head = now;
  }
  await session.api.app.get(ProjectionHost).waitForAll();
}

function runNotes(label: string, m: Measured): string[] {
  const [warm, run] = m.runs;
  const statuses = (r: LoadRun) =>
    Object.entries(r.statuses ?? {})
      .map(([s, c]) => `${s}: ${c}`)
      .join(', ');
  const other = (r: LoadRun) =>
    Object.entries(r.statuses ?? {})
      .filter(([s]) => s !== '200' && s !== '409')
      .reduce((sum, [, c]) => sum + c, 0) +
    r.errors +
    r.timeouts;
  const samples = run.failureSamples.filter((s) => !s.startsWith('409'));
  return [
    `  ${label}:`,
    loadCounts('    measured', m.summary, m.cpu),
    `    answers by status, measured run: ${statuses(run)} (warm-up: ${statuses(warm)}); 409 already_charging (a user's earlier purchase still in flight; not a service error): ` +
      `${run.statuses?.['409'] ?? 0} measured, ${warm.statuses?.['409'] ?? 0} warm-up; other failures (non-200 but 409, errors, timeouts): ${other(run)} measured, ${other(warm)} warm-up (0 expected)` +
      `${samples.length ? `; e.g. ${samples.slice(0, 2).join(' | ')}` : ''}`,
  ];
}

/** No oversell on the hot deal: its number_sold and num_left against the 200 answers and the server's fulfilled purchases. */
async function oversellCheck(session: PurchasesSession, runs: LoadRun[], openHolds: number): Promise<{ ok: boolean; notes: string[] }> {
  const { hot } = session;
  const answered200 = runs.reduce((s, r) => s + (r.statuses?.['200'] ?? 0), 0);
  const cutOff = runs.reduce((s, r) => s + Math.max(0, r.built - r.total), 0);
  const fulfilled = await session.api.app.get(ViewStore).count(PURCHASE_DETAILS, { 'deal.dealId': hot.id, fulfillmentState: 'fulfilled' });
  const answer = await httpsGet(`${session.origin}/deals/${encodeURIComponent(hot.id)}?api_key=${session.apiKey}`, session.ca);
  const deal = (JSON.parse(answer.body.toString('utf8')) as { deal?: { number_sold?: number; num_left?: number } }).deal;
  if (answer.status !== 200 || !deal)
    throw new Error(`GET /deals/${hot.id}: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
  const sold = deal.number_sold ?? Number.NaN;
  const left = deal.num_left ?? Number.NaN;
  const problems: string[] = [];
  if (sold !== fulfilled) problems.push(`number_sold ${sold} ≠ ${fulfilled} fulfilled purchases (×1)`);
  if (fulfilled < answered200) problems.push(`${fulfilled} fulfilled purchases < ${answered200} answers 200`);
  if (fulfilled > answered200 + cutOff)
    problems.push(`${fulfilled} fulfilled purchases > ${answered200} answers 200 + ${cutOff} requests cut off`);
  if (left !== DEAL_QUANTITY - sold - openHolds) problems.push(`num_left ${left} ≠ ${DEAL_QUANTITY} − ${sold} − ${openHolds} held`);
  if (problems.length)
    return {
      ok: false,
      notes: [
        `    OVERSELL CHECK FAILED on ${hot.id} (after the hot runs, server idle, views settled; ${answered200} answered 200, ${cutOff} cut off): ${problems.join('; ')}`,
      ],
    };
  return {
    ok: true,
    notes: [
      `    no oversell (checked after the hot runs with and without open holds, views settled): GET /deals/${hot.id} number_sold ${sold} = ${fulfilled} fulfilled purchases × 1 unit ` +
        `(${answered200} answered 200 over warm-up + measured, ${fulfilled - answered200} more fulfilled among the ${cutOff} requests cut off unanswered by the end of the runs); ` +
        `num_left ${left} = ${DEAL_QUANTITY} − ${sold} − ${openHolds} units in open reservations: ok`,
    ],
  };
}
