/**
 * Accounts writes of the real API: users created and cards stored per second.
 *
 * Setup: the whole API (`startApi`: Nest, auth, request logging, the embedded event store and
 * views, the simulated payment gateway) on a fresh data directory without demo data, and one
 * partner made with `CreatePartner`; every call authenticates with its `api_key`.
 *
 * Users: `POST /users` with a JSON body `{email, first_name, last_name}`, a unique email for every
 * request (`u<n>-<run>@bench.test`, made per request in the load generator by autocannon's
 * `setupRequest`), 20 connections. Every answer must be 2xx with a `user_id` (non-2xx and 2xx
 * without it are counted; 0 expected) and the ids must be distinct. Against: a bare Fastify 5 HTTPS
 * POST route in the same process that parses the same JSON bodies and answers with the very bytes
 * the API answered to one of them (`support/bare-route`), warm-up then alternating rounds
 * (`support/api-vs-bare`).
 *
 * Cards: `POST /credit_cards` `{user_id, number, verification_value, month, year, zip_code}` for the
 * users created above (one card each: every request names another user), all with the test number
 * 4242424242424242, 20 connections. Storing a card tokenizes it with the simulated gateway, whose
 * scrypt fingerprint of the number (N=2^14, r=8, p=1, 32 bytes, Node's default maxmem; about 33 ms
 * of one core) is expected to dominate. Against: that same scrypt, run bare in this process with
 * the same 20 in flight on the same libuv thread pool, hashes per second (aim: card stores/s ≥ 0.8
 * of it); warm-up then alternating rounds as for the HTTP targets. The latency of a bare hash
 * (submitted to done, at 20 in flight) is the limit beside the card store's p99.
 */
import { CreatePartner } from '@deals/accounts';
import { OPERATOR } from '@deals/kernel';
import { ProjectionHost } from '@deals/runtime';
import { CommandBus } from '@nestjs/cqrs';
import { pbkdf2, randomBytes, scrypt, ScryptOptions } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunningApi } from '../apps/api/src/bootstrap';
import { alternateRounds, loadCounts, Target } from './support/api-vs-bare';
import { startBarePostRoute, TlsMaterial } from './support/bare-route';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { describeInterference } from './support/cpu-meter';
import { httpsPostJson } from './support/https-get';
import { LoadRun, PostSpec, runLoad } from './support/load';
import { withTempDir } from './support/temp-dir';
import { startBenchApi } from './support/bench-api';

/**
 * The simulated gateway's card fingerprint (`libs/adapters/src/payment-gateway/simulated/
 * simulated-payment-gateway.adapter.ts`, `FINGERPRINT` and `FINGERPRINT_BYTES`): no maxmem given
 * there, so Node's default (32 MiB) here too.
 */
const FINGERPRINT: ScryptOptions = { N: 2 ** 14, r: 8, p: 1 };
const FINGERPRINT_BYTES = 32;
const CARD_NUMBER = '4242424242424242';
/** Aim: card stores/s as a share of the bare hash rate. */
const CARDS_AIM = 0.8;
/** Users made beyond the estimate of cards to store, and the card rate assumed before any is measured. */
const USER_MARGIN = 1.5;
const CARD_RATE_GUESS = 150;
/** Seconds each extra (unmeasured) user-making run lasts when the users phase made too few. */
const TOP_UP_SEC = 2;

export interface Session {
  api: RunningApi;
  tls: TlsMaterial;
  origin: string;
  apiKey: string;
  /** A tag of this bench run, in every email, so that no two runs' addresses meet. */
  runTag: string;
  options: BenchOptions;
}

export async function accountsBench(options: BenchOptions): Promise<BenchRow[]> {
  return withTempDir('accounts', async (dataDir) => {
    const session = await startAccountsApi(dataDir, options);
    try {
      const users = await usersPhase(session);
      await session.api.app.get(ProjectionHost).waitForAll();
      const cards = await cardsPhase(session, users.userIds);
      return [...users.rows, ...cards];
    } finally {
      await session.api.close();
    }
  });
}

/** Starts the API (no demo data) on `dataDir` with one partner; the caller closes it. */
export async function startAccountsApi(dataDir: string, options: BenchOptions): Promise<Session> {
  const { api, tls, origin } = await startBenchApi(dataDir);
  try {
    const partner = await api.app.get(CommandBus).execute(new CreatePartner('Accounts bench partner', 'partner', OPERATOR));
    await api.app.get(ProjectionHost).waitForAll();
    return { api, tls, origin, apiKey: partner.apiKey, runTag: Date.now().toString(36), options };
  } catch (error) {
    await api.close();
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Users

let loadRunCount = 0;

/** The body of `POST /users` with a fresh email for every request of one load run. */
export function userPost(session: Session): PostSpec {
  const run = `${session.runTag}r${++loadRunCount}`;
  return { template: `{"email":"u{n}-${run}@bench.test","first_name":"Bench","last_name":"User"}`, expectField: 'user_id' };
}

export const usersPath = (session: Session) => `/users?api_key=${encodeURIComponent(session.apiKey)}`;

async function usersPhase(session: Session): Promise<{ rows: BenchRow[]; userIds: string[] }> {
  const { options, tls, origin } = session;
  const path = usersPath(session);
  const probe = await httpsPostJson(origin + path, tls.cert, { email: `probe-${session.runTag}@bench.test`, first_name: 'Probe' });
  const probeId = probe.status === 200 ? (JSON.parse(probe.body.toString('utf8')) as { user_id?: unknown }).user_id : undefined;
  if (typeof probeId !== 'string')
    throw new Error(`POST /users: expected 200 with a user_id, got ${probe.status} ${probe.body.toString('utf8').slice(0, 300)}`);
  const bare = await startBarePostRoute(tls, '/users', probe.body);
  try {
    const fromBare = await httpsPostJson(bare.origin + path, tls.cert, { email: 'x@bench.test' });
    if (fromBare.status !== 200 || !fromBare.body.equals(probe.body))
      throw new Error(`bare POST route answered ${fromBare.status} with ${fromBare.body.length} B`);
    const origins: Record<Target, string> = { api: origin, bare: bare.origin };
    const measured = await alternateRounds(options, (target, durationSec) =>
      runLoad({
        origin: origins[target],
        paths: [path],
        connections: options.connections,
        ca: tls.cert,
        durationSec,
        post: userPost(session),
      }),
    );
    const { api, bare: bareSummary } = measured;
    if (api.ok === 0 || bareSummary.ok === 0)
      throw new Error(
        `POST /users: no 2xx (API non-2xx ${api.non2xx}, errors ${api.errors}; bare non-2xx ${bareSummary.non2xx}, errors ${bareSummary.errors})`,
      );
    const apiRuns = measured.runs.api;
    const userIds = apiRuns.flatMap((r) => r.collected);
    const distinct = new Set(userIds).size;
    const allRuns = [...apiRuns, ...measured.runs.bare];
    const failures = (runs: LoadRun[]) => runs.reduce((s, r) => s + r.non2xx + r.errors + r.timeouts + r.missingField, 0);
    const notes = [
      `POST /users (API, api_key) against a bare Fastify 5 HTTPS POST route (JSON body parsed, the API's own ${probe.body.length} B answer sent back): ` +
        `${options.connections} connections, pipelining 1, ${options.httpWarmupSec} s warm-up each, then ${options.httpDurationSec} s measured each in ${options.httpRounds} alternating round(s); ` +
        `body {email: "u<n>-<run>@bench.test", first_name, last_name}, a new email for every request (autocannon setupRequest)`,
      loadCounts('  API ', api, measured.cpu.api),
      loadCounts('  bare', bareSummary, measured.cpu.bare),
      `  users made by the API over warm-up and measured runs: ${userIds.length} answers with a user_id, ${distinct} distinct` +
        `${distinct !== userIds.length ? ' (DUPLICATE user_ids!)' : ''}; non-2xx, errors, timeouts or 2xx without user_id over every run of both targets: ${failures(allRuns)}` +
        `${
          failures(allRuns)
            ? ` (0 expected; e.g. ${apiRuns
                .flatMap((r) => r.failureSamples)
                .slice(0, 2)
                .join(' | ')})`
            : ' (0 expected)'
        }`,
    ];
    return {
      userIds: [...new Set(userIds)],
      rows: [
        row('POST /users (API) users/s', api.okPerSec, 'users/s', 'bare Fastify 5 HTTPS POST route', bareSummary.okPerSec, {
          limitUnit: 'req/s',
          notes,
        }),
        row('POST /users (API) p99 latency', api.p99Ms, 'ms', 'bare POST route p99 (ratio: lower is better)', bareSummary.p99Ms),
      ],
    };
  } finally {
    await bare.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Cards

export const cardsPath = (session: Session) => `/credit_cards?api_key=${encodeURIComponent(session.apiKey)}`;

/** The body of `POST /credit_cards` for a user: the test number, a valid expiry, a zip code. */
export function cardBody(userId: string) {
  return {
    user_id: userId,
    number: CARD_NUMBER,
    verification_value: '123',
    month: 12,
    year: new Date().getUTCFullYear() + 5,
    zip_code: '60601',
  };
}

async function cardsPhase(session: Session, madeUsers: string[]): Promise<BenchRow[]> {
  const { options, tls, origin } = session;
  const path = cardsPath(session);
  const card = cardBody;
  const template = JSON.stringify(card('{item}'));

  // Users not yet given a card; each request takes the next. More are made when too few are left.
  const users = [...madeUsers];
  let next = 0;
  let toppedUp = 0;
  let reused = 0;
  const probe = await httpsPostJson(origin + path, tls.cert, card(users[next++]));
  if (
    probe.status !== 200 ||
    typeof (JSON.parse(probe.body.toString('utf8')) as { credit_card_id?: unknown }).credit_card_id !== 'string'
  ) {
    throw new Error(
      `POST /credit_cards: expected 200 with a credit_card_id, got ${probe.status} ${probe.body.toString('utf8').slice(0, 300)}`,
    );
  }
  let cardRate = CARD_RATE_GUESS;
  const ensureUsers = async (durationSec: number) => {
    const wanted = Math.ceil(options.connections + durationSec * cardRate * USER_MARGIN);
    while (users.length - next < wanted) {
      const run = await runLoad({
        origin,
        paths: [usersPath(session)],
        connections: options.connections,
        ca: tls.cert,
        durationSec: TOP_UP_SEC,
        post: userPost(session),
      });
      users.push(...run.collected);
      toppedUp += run.collected.length;
      if (run.collected.length === 0)
        throw new Error(`POST /users made no user to hold cards (non-2xx ${run.non2xx}, errors ${run.errors})`);
    }
  };

  const pepper = randomBytes(32);
  const cardIds: string[] = [];
  const measured = await alternateRounds(options, async (target, durationSec) => {
    if (target === 'bare') return hashLoad(pepper, options.connections, durationSec);
    await ensureUsers(durationSec);
    const items = users.slice(next);
    const run = await runLoad({
      origin,
      paths: [path],
      connections: options.connections,
      ca: tls.cert,
      durationSec,
      post: { template, items, expectField: 'credit_card_id' },
    });
    next += Math.min(run.built, items.length);
    reused += Math.max(0, run.built - items.length);
    cardIds.push(...run.collected);
    if (run.durationSec > 0) cardRate = Math.max(1, run.ok / run.durationSec);
    // The requests cut off by the end of the run were sent, so the API still stores those cards
    // (20 fingerprints queued on the thread pool): let it finish, and its views catch up, before
    // the bare hashes run on the same pool.
    await threadPoolIdle();
    await session.api.app.get(ProjectionHost).waitForAll();
    return run;
  });
  const { api, bare } = measured;
  if (api.ok === 0)
    throw new Error(`POST /credit_cards: no 2xx (non-2xx ${api.non2xx}, errors ${api.errors}; e.g. ${api.failureSamples.join(' | ')})`);
  const failures = measured.runs.api.reduce((s, r) => s + r.non2xx + r.errors + r.timeouts + r.missingField, 0);
  const threadpool = process.env.UV_THREADPOOL_SIZE
    ? `UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE}`
    : 'UV_THREADPOOL_SIZE unset (libuv default: 4 threads)';
  const notes = [
    `POST /credit_cards (API, api_key) against bare scrypt (N=2^14, r=8, p=1, ${FINGERPRINT_BYTES} B, default maxmem: the simulated gateway's card fingerprint) in this process, ` +
      `${options.connections} in flight, on the libuv thread pool (${threadpool}): ${options.connections} connections, pipelining 1, ` +
      `${options.httpWarmupSec} s warm-up each, then ${options.httpDurationSec} s measured each in ${options.httpRounds} alternating round(s); ` +
      `card ${CARD_NUMBER} for every request, each for another user made beforehand`,
    loadCounts('  API ', api, measured.cpu.api),
    `  bare: ${bare.ok} hashes in ${bare.durationSec.toFixed(1)} s; latency (submitted to done) p50 ${bare.p50Ms.toFixed(1)} ms, p99 ${bare.p99Ms.toFixed(1)} ms, max ${bare.maxMs.toFixed(1)} ms; ` +
      `CPU: this process ${measured.cpu.bare ? measured.cpu.bare.ownCores.toFixed(2) : '?'} cores; ${describeInterference(measured.cpu.bare)}`,
    `  cards stored over warm-up and measured runs: ${cardIds.length + 1} (${new Set(cardIds).size + 1} distinct credit_card_ids) on ${next} users ` +
      `(${madeUsers.length} from the users bench${toppedUp ? `, ${toppedUp} made for this after it` : ''})` +
      `${reused ? `; ${reused} requests went to a user who already had a card (too few users)` : ''}; ` +
      `non-2xx, errors, timeouts or 2xx without credit_card_id: ${failures}${failures ? ` (0 expected; e.g. ${api.failureSamples.slice(0, 2).join(' | ')})` : ' (0 expected)'}`,
  ];
  return [
    row(
      'POST /credit_cards (API) stores/s',
      api.okPerSec,
      'cards/s',
      `bare scrypt N=2^14 in this process, ${options.connections} in flight`,
      bare.okPerSec,
      {
        limitUnit: 'hashes/s',
        aim: { min: CARDS_AIM },
        notes,
      },
    ),
    row('POST /credit_cards (API) p99 latency', api.p99Ms, 'ms', 'bare scrypt p99 at same in-flight (ratio: lower is better)', bare.p99Ms),
  ];
}

/** How long the thread pool must stay idle (a trivial job on it runs at once, again and again). */
const POOL_QUIET_MS = 300;
const POOL_QUIET_PROBE_MS = 25;
const POOL_IDLE_TIMEOUT_MS = 60_000;

/**
 * Waits until nothing is queued or running on the libuv thread pool for {@link POOL_QUIET_MS}: a
 * 1-iteration PBKDF2 (a thread-pool job of a microsecond) is sent every
 * {@link POOL_QUIET_PROBE_MS}; while scrypt jobs are queued or hold every thread it waits for one.
 */
export async function threadPoolIdle(): Promise<void> {
  const probe = () =>
    new Promise<number>((resolve, reject) => {
      const sent = performance.now();
      pbkdf2('', '', 1, 1, 'sha256', (error) => (error ? reject(error) : resolve(performance.now() - sent)));
    });
  const deadline = performance.now() + POOL_IDLE_TIMEOUT_MS;
  let quietSince = performance.now();
  while (performance.now() - quietSince < POOL_QUIET_MS) {
    if (performance.now() > deadline) throw new Error(`the thread pool was still busy after ${POOL_IDLE_TIMEOUT_MS} ms`);
    if ((await probe()) > 5) quietSince = performance.now();
    await sleep(POOL_QUIET_PROBE_MS);
  }
}

/**
 * The bare fingerprint rate: `inFlight` scrypt computations kept running in this process for
 * `durationSec`, as a {@link LoadRun} so that it times and sums like an HTTP target. Hashes finished
 * within the time count; those still running then are waited for, not counted.
 */
export function hashLoad(pepper: Buffer, inFlight: number, durationSec: number): Promise<LoadRun> {
  return new Promise((resolve, reject) => {
    let latencies = new Float64Array(1024);
    let count = 0;
    let running = 0;
    let failed: Error | null = null;
    const started = performance.now();
    const endAt = started + durationSec * 1000;
    const finish = () => {
      if (failed) return reject(failed);
      resolve({
        durationSec,
        total: count,
        ok: count,
        non2xx: 0,
        errors: 0,
        timeouts: 0,
        bytes: 0,
        autocannonP99Ms: Number.NaN,
        latenciesMs: latencies.slice(0, count),
        cpuMicros: 0,
        busyCores: 0,
        built: count,
        collected: [],
        missingField: 0,
        failureSamples: [],
      });
    };
    const launch = () => {
      running++;
      const submitted = performance.now();
      scrypt(CARD_NUMBER, pepper, FINGERPRINT_BYTES, FINGERPRINT, (error) => {
        running--;
        const done = performance.now();
        if (error) failed ??= error;
        else if (done <= endAt) {
          if (count === latencies.length) {
            const grown = new Float64Array(latencies.length * 2);
            grown.set(latencies);
            latencies = grown;
          }
          latencies[count++] = done - submitted;
        }
        if (done < endAt && !failed) launch();
        else if (running === 0) finish();
      });
    };
    for (let i = 0; i < inFlight; i++) launch();
  });
}
