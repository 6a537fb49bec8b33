/**
 * Webhooks (issue 37): deliveries per second to a local receiver against bare signed POSTs to it
 * from the same process, and the hot-deal purchase rate with an endpoint subscribed to
 * `purchase.completed` against the same load with none, all in one run.
 *
 * The receiver: `support/webhook-sink`, in a process of its own (as a receiver runs elsewhere than
 * the service), HTTPS with a self-signed certificate of its own (its own CA, for 127.0.0.1),
 * answering every request 200 with an empty body as soon as its body has arrived, counting per
 * path. The API sends to it with the `WebhookSender` it builds in production, which trusts Node's
 * CAs plus `NODE_EXTRA_CA_CERTS` (docs/webhooks.md), read only when a process starts: so this bench
 * makes the certificate, then runs itself again in a fresh process of run-all with
 * `NODE_EXTRA_CA_CERTS` naming it (`--child=webhooks`, the certificate's folder in {@link SINK_ENV})
 * and hands that process's rows back. Nothing of the service is changed or reached into; the
 * receiver is trusted as a deployment trusts a private CA.
 *
 * Setup: the purchases bench's (`startPurchasesApi`: the whole API on a fresh data directory, one
 * partner, the demo regions, 201 long-running daily deals with a large stock, 500 users with a
 * stored card), with `WEBHOOK_ALLOW_PRIVATE_ADDRESSES=on` (the receiver is on 127.0.0.1) and the
 * default retry schedule and timeout; the embedded (timers) scheduler runs the delivery jobs.
 *
 * 1. Deliveries/s, each delivery a job (the delivery and its event read, rendered, signed, POSTed,
 *    its attempt appended), timed at the receiver from the first arrival to the last: (N − 1) ÷ that
 *    time, N the deliveries the feed made to the endpoint; each run on a new endpoint for
 *    `user.created`, disabled after it:
 *    - live: users made with `POST /users` (a new email each) by autocannon in a child process
 *      ({@link CREATE_CONNECTIONS} connections) for a fixed time, after a warm-up the same way. When
 *      the deliveries keep pace with the users made, this figure is the rate users are made at
 *      while delivered, not what the deliveries could do: no aim;
 *    - a backlog: `POST …/replay` of the {@link BACKLOG} oldest `user.created` events (setup's
 *      users and the live runs'), all pending at once. Aim: at least {@link DELIVERY_AIM}.
 *    The sender's concurrency is measured during the run (requests to the receiver started and not yet
 *    answered, from Node's `http.client.*` diagnostics channels): its time-average, rounded (at
 *    least 1), is the bare side's. Against each: N bare signed POSTs of a real `user.created` body
 *    (as the feed renders it), each signed afresh (`webhookHeaders`, a unique id, one secret), from a
 *    `WebhookSender` built as the service builds its own (the same settings: its keep-alive agent,
 *    private addresses allowed, the configured timeout), to the same receiver from the same process
 *    at that concurrency, after {@link BARE_WARMUP} unmeasured; timed the same way at the receiver.
 *
 * 2. Hot-deal purchases/s with an endpoint for `purchase.completed` (receiver answering 200) against
 *    the same load with the endpoint disabled (a disabled endpoint is sent nothing: the feed makes no
 *    delivery for it), in alternating runs (none, with; with, none; …; each the purchases bench's
 *    hot-deal `measure`: its own warm-up, then the measured run, settled after); medians shown. Aim:
 *    at least {@link PURCHASES_AIM}. The deliveries of each "with" run (its warm-up included) are
 *    checked against the hot deal's purchases fulfilled meanwhile: one each, every one arrived once.
 */
import { EVENT_FEED, webhookHeaders, WebhookSender, WebhookSettings, newWebhookSecret } from '@deals/event-feed';
import { ViewStore } from '@deals/kernel';
import { PURCHASE_DETAILS } from '@deals/purchasing';
import { ProjectionHost } from '@deals/runtime';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runBenchChild } from './support/bench-child';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { CpuUse, describeInterference, startCpuMeter } from './support/cpu-meter';
import { httpsGet, httpsPostJson } from './support/https-get';
import { runLoad } from './support/load';
import { withTempDir } from './support/temp-dir';
import { sinkCertificate, SinkProcess, startSinkProcess } from './support/webhook-sink';
import { measure, PurchasesSession, settle, startPurchasesApi } from './purchases.bench';

/** The folder holding the receiver's certificate and key, set for the process that measures. */
const SINK_ENV = 'BENCH_WEBHOOK_SINK_DIR';
const DELIVERY_AIM = 0.5;
const PURCHASES_AIM = 0.9;
/** Connections of the autocannon child making users. */
const CREATE_CONNECTIONS = 20;
/** Seconds of user creation for the measured live deliveries (quick, full); the warm-up takes the bench's warm-up time. */
const CREATE_SEC = { quick: 2, full: 6 };
/** Past events redelivered at once for the backlog's deliveries (at most what there are: setup's 500 users and the live runs'). */
const BACKLOG = { quick: 1_000, full: 3_000 };
/** What one replay call queues at most (the API's REPLAY_MAX). */
const REPLAY_PAGE = 1_000;
const BARE_WARMUP = 500;
const PURCHASE_PAIRS = { quick: 1, full: 3 };
/** The longest a run's deliveries may take to arrive after its load stopped. */
const DRAIN_TIMEOUT_MS = 300_000;
/** Every path the service's and the bare deliveries go to starts with this (the diagnostics filter). */
const HOOK_PREFIX = '/hook/';

export async function webhooksBench(options: BenchOptions): Promise<BenchRow[]> {
  const sinkDir = process.env[SINK_ENV];
  return sinkDir ? measureAll(options, sinkDir) : inProcessTrustingTheSink(options);
}

/** Makes the receiver's certificate and runs the bench again in a fresh process whose Node trusts it. */
async function inProcessTrustingTheSink(options: BenchOptions): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'deals-bench-webhook-sink-'));
  try {
    const { cert, key } = await sinkCertificate();
    writeFileSync(join(dir, 'sink.crt'), cert);
    writeFileSync(join(dir, 'sink.key'), key, { mode: 0o600 });
    return await runBenchChild(process.argv[1], 'webhooks', options.quick ? ['--quick'] : [], process.cwd(), {
      ...process.env,
      NODE_EXTRA_CA_CERTS: join(dir, 'sink.crt'),
      [SINK_ENV]: dir,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureAll(options: BenchOptions, sinkDir: string): Promise<BenchRow[]> {
  const sink = await startSinkProcess({
    cert: readFileSync(join(sinkDir, 'sink.crt'), 'utf8'),
    key: readFileSync(join(sinkDir, 'sink.key'), 'utf8'),
  });
  try {
    return await withTempDir('webhooks', async (dataDir) => {
      const session = await startPurchasesApi(dataDir, { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'on' });
      try {
        const deliveries = await deliveriesAgainstBare(session, sink, options);
        const purchases = await purchasesWithAndWithout(session, sink, options);
        return [...deliveries, ...purchases];
      } finally {
        await session.api.close();
      }
    });
  } finally {
    await sink.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Deliveries/s against bare signed POSTs.

/**
 * Requests this process sends to paths under {@link HOOK_PREFIX}: in flight now, at most, and the
 * time-average over the span from the first start to the latest answer (Little's law's L), taken
 * from Node's HTTP client diagnostics channels (start, then the answer's head or an error).
 */
function startInFlightMeter() {
  const open = new WeakSet<ClientRequest>();
  let now = 0;
  let peak = 0;
  let area = 0;
  let first = Number.NaN;
  let last = Number.NaN;
  let started = 0;
  const step = (by: number) => {
    const t = performance.now();
    if (Number.isNaN(first)) first = t;
    else area += now * (t - last);
    last = t;
    now += by;
    peak = Math.max(peak, now);
  };
  const onStart = (message: unknown) => {
    const request = (message as { request: ClientRequest }).request;
    if (!request.path.startsWith(HOOK_PREFIX)) return;
    open.add(request);
    started++;
    step(1);
  };
  const onEnd = (message: unknown) => {
    const request = (message as { request: ClientRequest }).request;
    if (!open.delete(request)) return;
    step(-1);
  };
  subscribe('http.client.request.start', onStart);
  subscribe('http.client.response.finish', onEnd);
  subscribe('http.client.request.error', onEnd);
  return () => {
    unsubscribe('http.client.request.start', onStart);
    unsubscribe('http.client.response.finish', onEnd);
    unsubscribe('http.client.request.error', onEnd);
    return { started, peak, mean: last > first ? area / (last - first) : Number.NaN };
  };
}

/** Registers an endpoint of the partner at `url`; its id. */
async function register(session: PurchasesSession, url: string, types: string[], enabled = true): Promise<string> {
  const answer = await httpsPostJson(`${session.origin}/v1/webhook_endpoints?api_key=${session.apiKey}`, session.ca, {
    url,
    types,
    enabled,
  });
  const id =
    answer.status === 201
      ? (JSON.parse(answer.body.toString('utf8')) as { webhook_endpoint?: { id?: string } }).webhook_endpoint?.id
      : null;
  if (!id) throw new Error(`POST /v1/webhook_endpoints: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
  await session.api.app.get(ProjectionHost).waitForAll();
  return id;
}

/** Enables or disables an endpoint (`PUT /v1/webhook_endpoints/:id`), views settled after. */
async function setEnabled(session: PurchasesSession, id: string, enabled: boolean): Promise<void> {
  const answer = await httpsPostJson(
    `${session.origin}/v1/webhook_endpoints/${id}?api_key=${session.apiKey}`,
    session.ca,
    { enabled },
    {},
    false,
    'PUT',
  );
  if (answer.status !== 200)
    throw new Error(`PUT /v1/webhook_endpoints/${id}: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
  await session.api.app.get(ProjectionHost).waitForAll();
}

/** The deliveries the feed made to an endpoint, and how many of them succeeded (views settled). */
async function deliveryCounts(session: PurchasesSession, endpointId: string) {
  const views = session.api.app.get(ViewStore);
  return {
    made: await views.count(EVENT_FEED, { kind: 'delivery', endpointId }),
    succeeded: await views.count(EVENT_FEED, { kind: 'delivery', endpointId, status: 'succeeded' }),
  };
}

interface ServiceDeliveries {
  count: number;
  perSec: number;
  spanMs: number;
  /** Deliveries at the receiver when the making of events stopped. */
  arrivedByMadeEnd: number;
  succeeded: number;
  distinct: number;
  inFlight: { started: number; peak: number; mean: number };
  cpu: CpuUse | null;
  connections: number;
}

/**
 * The deliveries of a new endpoint for `user.created` at `path`, the events (or redeliveries) made
 * by `make` (which returns the CPU µs of any child process it ran); timed at the receiver from the
 * first arrival to the last, once the feed's deliveries have all arrived. The endpoint is disabled after.
 */
async function serviceDeliveries(
  session: PurchasesSession,
  sink: SinkProcess,
  path: string,
  make: (endpointId: string) => Promise<number>,
): Promise<ServiceDeliveries> {
  const endpointId = await register(session, sink.url(path), ['user.created']);
  const connectionsBefore = (await sink.connections()).accepted;
  const sinkCpuBefore = await sink.cpuMicros();
  const meter = startCpuMeter();
  const inFlight = startInFlightMeter();
  const childMicros = await make(endpointId);
  const arrivedByMadeEnd = (await sink.tally(path)).requests;
  await settle(session);
  const counts = await deliveryCounts(session, endpointId);
  const tally = await sink.waitFor(path, counts.made, DRAIN_TIMEOUT_MS);
  const flight = inFlight();
  const sinkMicros = (await sink.cpuMicros()) - sinkCpuBefore;
  const cpu = meter(childMicros + sinkMicros);
  await setEnabled(session, endpointId, false);
  const spanMs = tally.lastAt - tally.firstAt;
  return {
    count: counts.made,
    perSec: ((tally.requests - 1) * 1000) / spanMs,
    spanMs,
    arrivedByMadeEnd,
    succeeded: counts.succeeded,
    distinct: tally.distinct,
    inFlight: flight,
    cpu,
    connections: (await sink.connections()).accepted - connectionsBefore,
  };
}

/** Users made with `POST /users` by autocannon for `seconds` (each a `user.created` event); the load's CPU µs and its 200s. */
function makeUsers(session: PurchasesSession, seconds: number, made: { users: number }) {
  return async (endpointId: string) => {
    const load = await runLoad({
      origin: session.origin,
      paths: [`/users?api_key=${session.apiKey}`],
      connections: CREATE_CONNECTIONS,
      ca: session.ca,
      durationSec: seconds,
      post: { template: `{"email":"hook{n}-${endpointId}@bench.test"}` },
    });
    if (load.ok === 0)
      throw new Error(`POST /users: no 2xx (statuses ${JSON.stringify(load.statuses)}; e.g. ${load.failureSamples.join(' | ')})`);
    made.users = load.ok;
    return load.cpuMicros;
  };
}

/** Redeliveries of up to `count` past `user.created` events (`POST …/replay`, {@link REPLAY_PAGE} a call, until enough or none left). */
function replayUsers(session: PurchasesSession, count: number, queued: { events: number }) {
  return async (endpointId: string) => {
    let after: string | null = null;
    while (queued.events < count) {
      const answer = await httpsPostJson(
        `${session.origin}/v1/webhook_endpoints/${endpointId}/replay?api_key=${session.apiKey}`,
        session.ca,
        after ? { after } : {},
      );
      const page =
        answer.status === 200
          ? (JSON.parse(answer.body.toString('utf8')) as { queued: number; next_cursor: string | null; has_more: boolean })
          : null;
      if (!page)
        throw new Error(`POST /v1/webhook_endpoints/${endpointId}/replay: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
      queued.events += page.queued;
      if (!page.has_more || !page.next_cursor) break;
      after = page.next_cursor;
    }
    return 0;
  };
}

/** `count` signed POSTs of `body` to `path`, `concurrency` at a time, from `sender`; timed at the receiver. */
async function bareDeliveries(sender: WebhookSender, sink: SinkProcess, path: string, body: string, count: number, concurrency: number) {
  const secret = newWebhookSecret();
  const connectionsBefore = (await sink.connections()).accepted;
  const sinkCpuBefore = await sink.cpuMicros();
  const meter = startCpuMeter();
  let next = 0;
  let failed = 0;
  let sample = '';
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const headers = webhookHeaders([secret], `msg_bare_${path.replace(/\W/g, '')}_${i}`, Math.floor(Date.now() / 1000), body);
      const sent = await sender.send({ url: sink.url(path), headers, body });
      if (sent.outcome !== 'succeeded') {
        failed++;
        sample ||= `${sent.status} ${sent.error}`;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const sinkMicros = (await sink.cpuMicros()) - sinkCpuBefore;
  const cpu = meter(sinkMicros);
  const tally = await sink.tally(path);
  if (failed) throw new Error(`bare signed POSTs to ${path}: ${failed} of ${count} failed, e.g. ${sample}`);
  const spanMs = tally.lastAt - tally.firstAt;
  return {
    perSec: ((tally.requests - 1) * 1000) / spanMs,
    spanMs,
    arrived: tally.requests,
    cpu,
    connections: (await sink.connections()).accepted - connectionsBefore,
  };
}

/** A `user.created` event as the feed renders it (what a delivery's body is). */
async function userCreatedBody(session: PurchasesSession): Promise<string> {
  const answer = await httpsGet(`${session.origin}/v1/events?per_page=20&api_key=${session.apiKey}`, session.ca);
  const events =
    answer.status === 200 ? (JSON.parse(answer.body.toString('utf8')) as { events?: Array<{ type: string }> }).events : undefined;
  const event = events?.find((e) => e.type === 'user.created');
  if (!event) throw new Error(`GET /v1/events: no user.created among ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
  return JSON.stringify(event);
}

async function deliveriesAgainstBare(session: PurchasesSession, sink: SinkProcess, options: BenchOptions): Promise<BenchRow[]> {
  const warmMade = { users: 0 };
  const warm = await serviceDeliveries(session, sink, `${HOOK_PREFIX}users-warm`, makeUsers(session, options.httpWarmupSec, warmMade));
  const createSec = options.quick ? CREATE_SEC.quick : CREATE_SEC.full;
  const liveMade = { users: 0 };
  const live = await serviceDeliveries(session, sink, `${HOOK_PREFIX}users`, makeUsers(session, createSec, liveMade));
  const wanted = options.quick ? BACKLOG.quick : BACKLOG.full;
  const replayed = { events: 0 };
  const backlog = await serviceDeliveries(session, sink, `${HOOK_PREFIX}replayed`, replayUsers(session, wanted, replayed));
  await settle(session);

  const settings = session.api.app.get(WebhookSettings);
  // As EventFeedModule builds the service's own sender.
  const sender = new WebhookSender({ allowPrivateAddresses: settings.allowPrivateAddresses, timeoutMs: settings.timeoutMs });
  const body = await userCreatedBody(session);
  const bareOf = async (service: ServiceDeliveries, name: string) => {
    const concurrency = Math.max(1, Math.round(service.inFlight.mean));
    await bareDeliveries(sender, sink, `${HOOK_PREFIX}bare-warm-${name}`, body, BARE_WARMUP, concurrency);
    return { concurrency, ...(await bareDeliveries(sender, sink, `${HOOK_PREFIX}bare-${name}`, body, service.count, concurrency)) };
  };
  let bareLive: Awaited<ReturnType<typeof bareOf>>;
  let bareBacklog: Awaited<ReturnType<typeof bareOf>>;
  try {
    bareLive = await bareOf(live, 'live');
    bareBacklog = await bareOf(backlog, 'backlog');
  } finally {
    sender.close();
  }
  const allOf = (d: ServiceDeliveries) => d.succeeded === d.count && d.distinct === d.count;
  const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const senderNote = (d: ServiceDeliveries) =>
    `sender (the service's WebhookSender, jobs of the timers scheduler): ${d.inFlight.started} POSTs, in flight ${d.inFlight.mean.toFixed(1)} on average (peak ${d.inFlight.peak}), ` +
    `${d.connections} TLS connections accepted by the receiver; ${d.count} made by the feed, ${d.succeeded} recorded succeeded, ${d.distinct} distinct webhook-ids arrived; ` +
    `CPU: server process ${d.cpu ? d.cpu.ownCores.toFixed(2) : '?'} cores${d.cpu?.mainThreadCores != null ? ` (main thread ${d.cpu.mainThreadCores.toFixed(2)})` : ''}; ${describeInterference(d.cpu)}`;
  const bareNote = (b: typeof bareLive) =>
    `bare: ${b.arrived} POSTs (after ${BARE_WARMUP} unmeasured) of a ${body.length} B user.created body as the feed renders it, each signed afresh (webhookHeaders, one secret), ` +
    `from a WebhookSender built as the service builds its own, ${b.concurrency} at a time (the service's average in flight, rounded), nothing recorded; ` +
    `first to last arrival ${sec(b.spanMs)}; ${b.connections} TLS connections; CPU: this process ${b.cpu ? b.cpu.ownCores.toFixed(2) : '?'} cores; ${describeInterference(b.cpu)}`;
  return [
    row(
      `webhook deliveries of a backlog (${backlog.count} user.created replayed), deliveries/s${allOf(backlog) ? '' : ' (NOT ALL DELIVERED?)'}`,
      backlog.perSec,
      'deliveries/s',
      `bare signed POSTs of a user.created body, same sender settings, ${bareBacklog.concurrency} in flight`,
      bareBacklog.perSec,
      {
        limitUnit: 'POSTs/s',
        aim: { min: DELIVERY_AIM },
        notes: [
          `webhook deliveries to a local HTTPS receiver (a process of its own, answering 200 at once, trusted through NODE_EXTRA_CA_CERTS); first to last arrival at the receiver, (N − 1) ÷ that time`,
          `  backlog: a new endpoint for user.created and POST …/replay of the ${backlog.count} oldest user.created events (of the ${wanted} asked; ${REPLAY_PAGE} a call): all pending at once, ` +
            `each a job run as a live delivery is; first to last arrival ${sec(backlog.spanMs)}`,
          `    ${senderNote(backlog)}`,
          `    ${bareNote(bareBacklog)}`,
        ],
      },
    ),
    row(
      `webhook deliveries while users are made, deliveries/s${allOf(live) ? '' : ' (NOT ALL DELIVERED?)'}`,
      live.perSec,
      'deliveries/s',
      `bare signed POSTs of a user.created body, same sender settings, ${bareLive.concurrency} in flight`,
      bareLive.perSec,
      {
        limitUnit: 'POSTs/s',
        notes: [
          `  live: an endpoint for user.created; users made with POST /users by autocannon (${CREATE_CONNECTIONS} connections) for ${createSec} s: ${liveMade.users} users answered 200; ` +
            `first to last arrival ${sec(live.spanMs)}; ${live.arrivedByMadeEnd} of ${live.count} had arrived when the creation stopped` +
            `${live.count - live.arrivedByMadeEnd < live.count / 10 ? ' (deliveries kept pace: the figure is bound by the rate users were made at, alongside the deliveries, not by the deliveries alone; no aim)' : ''}; ` +
            `a warm-up before it (another endpoint, then disabled): ${warm.count} deliveries of ${warmMade.users} users made in ${options.httpWarmupSec} s, ${warm.perSec.toFixed(0)}/s`,
          `    ${senderNote(live)}`,
          `    ${bareNote(bareLive)}`,
        ],
      },
    ),
  ];
}

// ---------------------------------------------------------------------------------------------
// 2. Hot-deal purchases with an endpoint for purchase.completed, against none.

async function fulfilledOnHot(session: PurchasesSession): Promise<number> {
  return session.api.app.get(ViewStore).count(PURCHASE_DETAILS, { 'deal.dealId': session.hot.id, fulfillmentState: 'fulfilled' });
}

async function purchasesWithAndWithout(session: PurchasesSession, sink: SinkProcess, options: BenchOptions): Promise<BenchRow[]> {
  const path = `${HOOK_PREFIX}purchases`;
  const endpointId = await register(session, sink.url(path), ['purchase.completed'], false);
  const pairs = options.quick ? PURCHASE_PAIRS.quick : PURCHASE_PAIRS.full;
  const rates = { none: [] as number[], with: [] as number[] };
  const cpus = { none: [] as Array<CpuUse | null>, with: [] as Array<CpuUse | null> };
  const cpuLines: string[] = [];
  const statuses: string[] = [];
  let expected = 0;
  let arrived = 0;
  const checks: string[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    for (const withHook of pair % 2 === 0 ? [false, true] : [true, false]) {
      const fulfilledBefore = await fulfilledOnHot(session);
      const arrivedBefore = (await sink.tally(path)).requests;
      const sinkCpuBefore = await sink.cpuMicros();
      const t0 = performance.now();
      if (withHook) await setEnabled(session, endpointId, true);
      const measured = await measure(session, options, 'hot');
      if (withHook) await setEnabled(session, endpointId, false);
      await settle(session);
      const fulfilled = (await fulfilledOnHot(session)) - fulfilledBefore;
      const came = (await sink.tally(path)).requests - arrivedBefore;
      const sinkCores = ((await sink.cpuMicros()) - sinkCpuBefore) / 1000 / (performance.now() - t0);
      rates[withHook ? 'with' : 'none'].push(measured.summary.okPerSec);
      cpus[withHook ? 'with' : 'none'].push(measured.cpu);
      cpuLines.push(
        `  ${withHook ? 'with' : 'none'}, measured run: CPU server process ${measured.cpu ? measured.cpu.ownCores.toFixed(2) : '?'} cores; ${describeInterference(measured.cpu)}` +
          `${withHook ? ` (among them the receiver's process: ${sinkCores.toFixed(2)} cores on average over the run's warm-up, measured time and settling)` : ''}`,
      );
      const [, run] = measured.runs;
      statuses.push(
        `${withHook ? 'with' : 'none'} ${measured.summary.okPerSec.toFixed(0)}/s (p99 ${measured.summary.p99Ms.toFixed(1)} ms; ${JSON.stringify(run.statuses)})`,
      );
      if (withHook) {
        expected += fulfilled;
        arrived += came;
        checks.push(`${came} of ${fulfilled}`);
      } else if (came !== 0) checks.push(`${came} arrived during a run without the endpoint (0 expected)`);
    }
  }
  const counts = await deliveryCounts(session, endpointId);
  const distinct = (await sink.tally(path)).distinct;
  const allArrived = arrived === expected && counts.made === expected && counts.succeeded === expected && distinct === expected;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const ratios = rates.with.map((rate, i) => (rate / rates.none[i]).toFixed(2)).join(', ');
  const mainMs = (use: CpuUse | null, rate: number) =>
    use?.mainThreadCores != null ? `${((use.mainThreadCores * 1000) / Math.max(1, rate)).toFixed(3)} ms` : '?';
  return [
    row(
      `POST /purchases, hot deal, an endpoint for purchase.completed, purchases/s${allArrived ? '' : ' (DELIVERIES MISSING?)'}`,
      median(rates.with),
      'purchases/s',
      'the same hot-deal load with no endpoint, alternating runs',
      median(rates.none),
      {
        limitUnit: 'purchases/s',
        aim: { min: PURCHASES_AIM },
        notes: [
          `hot-deal purchases (the purchases bench's hot run: ${options.httpWarmupSec} s warm-up then ${options.httpDurationSec} s measured each) with an endpoint for purchase.completed at the local receiver ` +
            `against the endpoint disabled (the feed makes no delivery for it), ${pairs} alternating pair(s); with/none per pair ${ratios}; medians shown; runs: ${statuses.join('; ')}`,
          `  deliveries: ${expected} hot-deal purchases fulfilled during the runs with the endpoint (warm-ups included), ${arrived} deliveries arrived (per run ${checks.join(', ')}); ` +
            `the feed made ${counts.made}, ${counts.succeeded} recorded succeeded, ${distinct} distinct webhook-ids: ${allArrived ? 'every one arrived once' : 'NOT every one arrived once'}`,
          `  main thread per purchase: with ${cpus.with.map((c, i) => mainMs(c, rates.with[i])).join(', ')}; none ${cpus.none.map((c, i) => mainMs(c, rates.none[i])).join(', ')}`,
          ...cpuLines,
        ],
      },
    ),
  ];
}
