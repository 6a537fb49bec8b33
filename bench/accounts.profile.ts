/**
 * Where the time goes while the API creates users and stores cards; the card rate beside the bare
 * fingerprint hashes the accounts bench measures it by. Not part of `npm run bench`.
 *
 *   npm run build && node dist/bench/accounts.profile.js [--seconds=10] [--out=<dir>]
 *
 * Starts the API as the accounts bench does (`startAccountsApi`: no demo data, one partner), makes
 * enough users through `POST /users`, then
 * 1. runs the bare scrypt (the gateway's fingerprint) with 20 in flight for the given seconds;
 * 2. runs `POST /users`, then `POST /credit_cards` (20 connections, one card per user), each for the
 *    given seconds after a warm-up, with light instrumentation: `crypto.scrypt` wrapped (jobs outstanding on the thread pool, time-weighted;
 *    submitted-to-callback time), the gateway's `tokenize`, `EventStore.append`, the read-your-writes
 *    wait and `CommandBus.execute` timed, event-loop delay and utilisation;
 * 3. runs `POST /users` and `POST /credit_cards` again while taking a V8 CPU profile of the main
 *    thread (written to `<out>/accounts-users.cpuprofile` and `accounts-cards.cpuprofile`), and
 *    prints their self time by package or file and by function.
 * For 1 and 2 it prints the CPU each thread of this process used (Linux `/proc/self/task/<tid>/stat`):
 * the main (event-loop) thread, the libuv thread-pool threads (the ones busiest during the bare
 * hashes), the other threads (V8's GC and compiler helpers), and the load generator and other
 * processes (`support/cpu-meter`). With 2 cores the card rate is the pool's share of them divided by
 * the CPU time of one hash, so every other consumer shows up as the gap to the bare rate.
 */
import { CommandBus } from '@nestjs/cqrs';
import { EventStore, PaymentGateway, ViewProgress } from '@deals/kernel';
import { ProjectionHost } from '@deals/runtime';
import crypto, { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session as Inspector } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { cardBody, cardsPath, hashLoad, Session, startAccountsApi, threadPoolIdle, userPost, usersPath } from './accounts.bench';
import { BenchOptions } from './support/bench-row';
import { describeInterference, startCpuMeter } from './support/cpu-meter';
import { LoadRun, runLoad, summarize } from './support/load';
import { percentile } from './support/percentile';
import { withTempDir } from './support/temp-dir';
import { originalPlace, owner } from './support/source-place';

const CONNECTIONS = 20;
const WARM_UP_SEC = 3;
const TICK_MS = 10;
const SAMPLING_INTERVAL_MICROS = 500;

function argument(name: string, fallback: string): string {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? found.slice(name.length + 3) : fallback;
}

// ---------------------------------------------------------------------------------------------
// CPU per thread of this process

type ThreadTimes = Map<number, number>;

/** CPU ms (user + system) each thread of this process has used so far. */
function threadTimes(): ThreadTimes {
  const times: ThreadTimes = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      times.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    } catch {
      // the thread ended meanwhile
    }
  }
  return times;
}

/** The main thread's time on a CPU and waiting runnable for one (ms), from /proc/self/task/<pid>/schedstat. */
function mainSchedule(): { onCpu: number; runnable: number } {
  const [onCpu, runnable] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
  return { onCpu: onCpu / 1e6, runnable: runnable / 1e6 };
}

const delta = (before: ThreadTimes, after: ThreadTimes): ThreadTimes =>
  new Map([...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as [number, number]));

interface CpuSplit {
  main: number;
  pool: number;
  other: number;
}

function split(used: ThreadTimes, pool: Set<number>, wallMs: number): CpuSplit {
  let main = 0;
  let inPool = 0;
  let other = 0;
  for (const [tid, ms] of used) {
    if (tid === process.pid) main += ms;
    else if (pool.has(tid)) inPool += ms;
    else other += ms;
  }
  return { main: main / wallMs, pool: inPool / wallMs, other: other / wallMs };
}

const cores = (c: CpuSplit) =>
  `main thread ${c.main.toFixed(2)}, thread pool ${c.pool.toFixed(2)}, other threads of the process ${c.other.toFixed(2)} cores`;

// ---------------------------------------------------------------------------------------------
// Instrumentation

interface Timings {
  samples: Map<string, number[]>;
  /** Time-weighted count of scrypt jobs outstanding (submitted, callback not yet run). */
  outstandingMs: number[];
  outstanding: number;
  lastChange: number;
  record(name: string, ms: number): void;
}

function newTimings(): Timings {
  return {
    samples: new Map(),
    outstandingMs: [],
    outstanding: 0,
    lastChange: performance.now(),
    record(name, ms) {
      const list = this.samples.get(name) ?? [];
      list.push(ms);
      this.samples.set(name, list);
    },
  };
}

function changeOutstanding(t: Timings, by: number): void {
  const now = performance.now();
  t.outstandingMs[t.outstanding] = (t.outstandingMs[t.outstanding] ?? 0) + (now - t.lastChange);
  t.lastChange = now;
  t.outstanding += by;
}

/** Wraps what a card store goes through; returns a function that puts everything back. */
function instrument(session: Session, timings: () => Timings): () => void {
  const undo: Array<() => void> = [];
  const wrapAsync = <T extends object>(target: T, method: string, name: (args: unknown[]) => string | null) => {
    const original = (target as Record<string, (...args: unknown[]) => Promise<unknown>>)[method];
    (target as Record<string, unknown>)[method] = async function (this: unknown, ...args: unknown[]) {
      const started = performance.now();
      try {
        return await original.apply(this, args);
      } finally {
        const label = name(args);
        if (label) timings().record(label, performance.now() - started);
      }
    };
    undo.push(() => ((target as Record<string, unknown>)[method] = original));
  };

  // The gateway calls `(0, node_crypto_1.scrypt)(…)`: the module's property, looked up at each call.
  const scrypt = crypto.scrypt;
  (crypto as { scrypt: unknown }).scrypt = (...args: unknown[]) => {
    const callback = args.pop() as (error: Error | null, key: Buffer) => void;
    const t = timings();
    changeOutstanding(t, 1);
    const submitted = performance.now();
    (scrypt as (...a: unknown[]) => void)(...args, (error: Error | null, key: Buffer) => {
      changeOutstanding(t, -1);
      t.record('scrypt (submitted → callback)', performance.now() - submitted);
      callback(error, key);
    });
  };
  undo.push(() => ((crypto as { scrypt: unknown }).scrypt = scrypt));

  const app = session.api.app;
  wrapAsync(app.get(PaymentGateway), 'tokenize', () => 'gateway.tokenize (checks, scrypt, vault INSERT)');
  wrapAsync(app.get(EventStore), 'appendToStreams', () => 'EventStore.appendToStreams (group commit)');
  wrapAsync(app.get(ViewProgress), 'waitFor', (args) => `read-your-writes wait (${(args[0] as string[]).join(', ')})`);
  wrapAsync(app.get(CommandBus), 'execute', (args) => `CommandBus.execute ${(args[0] as object).constructor.name}`);
  return () => undo.reverse().forEach((u) => u());
}

function describeTimings(t: Timings, wallMs: number): string[] {
  const lines = [...t.samples]
    .sort((a, b) => b[1].length - a[1].length)
    .map(([name, list]) => {
      const sorted = Float64Array.from(list).sort();
      const mean = list.reduce((s, v) => s + v, 0) / list.length;
      return `  ${name}: ${list.length} calls, mean ${mean.toFixed(1)} ms, p50 ${percentile(sorted, 0.5).toFixed(1)}, p99 ${percentile(sorted, 0.99).toFixed(1)} ms`;
    });
  changeOutstanding(t, 0);
  const total = t.outstandingMs.reduce((s, v) => s + (v ?? 0), 0);
  if (total === 0) return lines;
  const share = (from: number, to: number) => (100 * t.outstandingMs.slice(from, to).reduce((s, v) => s + (v ?? 0), 0)) / total;
  const mean = t.outstandingMs.reduce((s, v, n) => s + n * (v ?? 0), 0) / total;
  lines.push(
    `  scrypt jobs outstanding (submitted, callback not run yet), over ${(total / 1000).toFixed(1)} of ${(wallMs / 1000).toFixed(1)} s: mean ${mean.toFixed(1)}; ` +
      `share of the time with 0: ${share(0, 1).toFixed(1)} %, 1–3 (pool not full): ${share(1, 4).toFixed(1)} %, 4 (pool full, none queued): ${share(4, 5).toFixed(1)} %, ≥ 5 (queued): ${share(5, 999).toFixed(1)} %`,
  );
  return lines;
}

// ---------------------------------------------------------------------------------------------
// V8 profile summary

/** The project file of a frame, or the package for dependencies. */
function place(url: string, line: number, column: number): string {
  return owner(originalPlace(url, line, column).file);
}

interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
}

function describeProfile(profile: CpuProfile): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const nativeByCaller = new Map<string, number>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const jsName = (id: number) => {
    const { functionName, url, lineNumber, columnNumber } = byId.get(id)!.callFrame;
    return `${functionName || '(anonymous)'}  ${place(url, lineNumber, columnNumber)}`;
  };
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const { functionName, url, lineNumber, columnNumber } = byId.get(id)!.callFrame;
    const where = url ? place(url, lineNumber, columnNumber) : /^\(.*\)$/.test(functionName) ? functionName : '(native code)';
    byOwner.set(where, (byOwner.get(where) ?? 0) + dt);
    const fn = `${functionName || '(anonymous)'}  ${where}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
    if (!url && !/^\(.*\)$/.test(functionName)) {
      // Native code is only telling beside the JavaScript that called it (two callers up).
      const callers: string[] = [];
      for (let at = parent.get(id); at !== undefined && callers.length < 2; at = parent.get(at))
        if (byId.get(at)!.callFrame.url) callers.push(jsName(at));
      const k = `${functionName}  ←  ${callers.join('  ←  ') || '(no JavaScript caller)'}`;
      nativeByCaller.set(k, (nativeByCaller.get(k) ?? 0) + dt);
    }
  });
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `    ${(v / 1000).toFixed(0).padStart(6)} ms ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
  return [
    `  main thread sampled ${(total / 1000).toFixed(0)} ms; self time by file or package:`,
    ...top(byOwner, 15),
    '  top functions by self time:',
    ...top(byFunction, 15),
    '  native self time by the JavaScript that called it:',
    ...top(nativeByCaller, 10),
  ];
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const seconds = Number(argument('seconds', '10'));
  const out = resolve(argument('out', '.'));
  mkdirSync(out, { recursive: true });
  const options: BenchOptions = {
    quick: false,
    httpDurationSec: seconds,
    httpRounds: 1,
    httpWarmupSec: WARM_UP_SEC,
    connections: CONNECTIONS,
    appends: 0,
    appendClients: 0,
    rawCommitSec: 0,
  };
  await withTempDir('accounts-profile', async (dataDir) => {
    const session = await startAccountsApi(dataDir, options);
    const host = session.api.app.get(ProjectionHost);
    try {
      console.log(
        `UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? 'unset (4)'}; ${CONNECTIONS} connections / in flight; ${seconds} s per measured run after ${WARM_UP_SEC} s warm-up`,
      );
      const users: string[] = [];
      const wanted = (3 * seconds + 2 * WARM_UP_SEC) * 80 + 200;
      while (users.length < wanted) {
        const run = await runLoad({
          origin: session.origin,
          paths: [usersPath(session)],
          connections: CONNECTIONS,
          ca: session.tls.cert,
          durationSec: 2,
          post: userPost(session),
        });
        users.push(...run.collected);
      }
      await host.waitForAll();
      console.log(`${users.length} users made`);

      // 1. bare hashes; the pool threads are the ones they keep busy.
      const pepper = randomBytes(32);
      await hashLoad(pepper, CONNECTIONS, WARM_UP_SEC);
      const meter = startCpuMeter();
      const before = threadTimes();
      const started = performance.now();
      const bare = summarize([await hashLoad(pepper, CONNECTIONS, seconds)]);
      const wall = performance.now() - started;
      const bareUsed = delta(before, threadTimes());
      const poolSize = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
      const pool = new Set(
        [...bareUsed]
          .sort((a, b) => b[1] - a[1])
          .slice(0, poolSize)
          .map(([tid]) => tid),
      );
      const bareCpu = split(bareUsed, pool, wall);
      console.log(
        `\n=== bare scrypt, ${CONNECTIONS} in flight: ${bare.okPerSec.toFixed(1)} hashes/s, p50 ${bare.p50Ms.toFixed(0)} ms, p99 ${bare.p99Ms.toFixed(0)} ms`,
      );
      console.log(
        `  CPU: ${cores(bareCpu)}; ${((1000 * bareCpu.pool) / bare.okPerSec).toFixed(1)} ms of pool CPU a hash; ${describeInterference(meter(0))}`,
      );

      // 2. users, then card stores, instrumented.
      let next = 0;
      const cardRun = async (durationSec: number): Promise<LoadRun> => {
        const items = users.slice(next);
        const run = await runLoad({
          origin: session.origin,
          paths: [cardsPath(session)],
          connections: CONNECTIONS,
          ca: session.tls.cert,
          durationSec,
          post: { template: JSON.stringify(cardBody('{item}')), items, expectField: 'credit_card_id' },
        });
        next += Math.min(run.built, items.length);
        if (run.built > items.length) throw new Error('too few users');
        return run;
      };
      const userRun = (durationSec: number) =>
        runLoad({
          origin: session.origin,
          paths: [usersPath(session)],
          connections: CONNECTIONS,
          ca: session.tls.cert,
          durationSec,
          post: userPost(session),
        });
      /** The requests cut off at the end of a run still finish (cards: their fingerprints): let them, and the views, finish. */
      const drain = async () => {
        await threadPoolIdle();
        await host.waitForAll();
      };
      let timings = newTimings();
      /** One instrumented run: what it did, the CPU of each thread, the main thread's schedule and the timings. */
      const observe = async (title: string, run: () => Promise<LoadRun>, against?: { label: string; perSec: number }) => {
        timings = newTimings();
        const delay = monitorEventLoopDelay({ resolution: 1 });
        delay.enable();
        const elu = performance.eventLoopUtilization();
        const scheduled = mainSchedule();
        const meter = startCpuMeter();
        const before = threadTimes();
        const started = performance.now();
        const raw = await run();
        const wall = performance.now() - started;
        const cpu = split(delta(before, threadTimes()), pool, wall);
        const use = meter(raw.cpuMicros);
        const loop = performance.eventLoopUtilization(elu);
        const schedule = mainSchedule();
        const onCpu = (schedule.onCpu - scheduled.onCpu) / wall;
        const runnable = (schedule.runnable - scheduled.runnable) / wall;
        delay.disable();
        const r = summarize([raw]);
        const described = describeTimings(timings, wall);
        await drain();
        console.log(
          `\n=== ${title}, ${CONNECTIONS} connections: ${r.okPerSec.toFixed(1)} 2xx/s${against ? ` (${(r.okPerSec / against.perSec).toFixed(2)} of ${against.label})` : ''}, ` +
            `p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms; non-2xx ${r.non2xx}, errors ${r.errors}`,
        );
        console.log(
          `  CPU over the run (${(wall / 1000).toFixed(1)} s, load generator start-up included): ${cores(cpu)}; load generator ${r.loadGeneratorCores.toFixed(2)}; ${describeInterference(use)}`,
        );
        console.log(
          `  main thread: ${((1000 * cpu.main) / r.okPerSec).toFixed(2)} ms CPU a request; event loop utilisation ${(100 * loop.utilization).toFixed(0)} %; ` +
            `loop delay p50 ${(delay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms`,
        );
        console.log(
          `  main thread's time (share of the run): on a CPU ${(100 * onCpu).toFixed(0)} %, runnable but waiting for a CPU ${(100 * runnable).toFixed(0)} %, ` +
            `so blocked in system calls (fsync, …) while the loop was busy ≈ ${(100 * Math.max(0, loop.utilization - onCpu - runnable)).toFixed(0)} % ` +
            `(event loop busy ${(100 * loop.utilization).toFixed(0)} %, less the other two)`,
        );
        for (const line of described) console.log(line);
        return raw;
      };
      const restore = instrument(session, () => timings);
      try {
        await userRun(WARM_UP_SEC);
        await drain();
        const madeNow = await observe('POST /users', () => userRun(seconds));
        users.push(...madeNow.collected);
        await cardRun(WARM_UP_SEC);
        await drain();
        await observe('POST /credit_cards', () => cardRun(seconds), { label: 'the bare hash rate', perSec: bare.okPerSec });

        // 3. both again, with the V8 profiler on the main thread.
        const inspector = new Inspector();
        inspector.connect();
        try {
          await inspector.post('Profiler.enable');
          await inspector.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_MICROS });
          for (const [name, title, run] of [
            ['users', 'POST /users', userRun],
            ['cards', 'POST /credit_cards', cardRun],
          ] as const) {
            await inspector.post('Profiler.start');
            const profiled = summarize([await run(seconds)]);
            const { profile } = (await inspector.post('Profiler.stop')) as unknown as { profile: CpuProfile };
            await drain();
            const file = join(out, `accounts-${name}.cpuprofile`);
            writeFileSync(file, JSON.stringify(profile));
            console.log(
              `\n=== ${title} under the V8 profiler (every ${SAMPLING_INTERVAL_MICROS} µs): ${profiled.okPerSec.toFixed(1)} 2xx/s; profile in ${file}`,
            );
            for (const line of describeProfile(profile)) console.log(line);
          }
        } finally {
          inspector.disconnect();
        }
      } finally {
        restore();
      }
    } finally {
      await session.api.close();
    }
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exitCode = 1;
});
