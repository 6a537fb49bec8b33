/**
 * Where the API spends its time serving the discovery bench's requests: a CPU profile of the
 * server process only while the load runs, and its summary. Not part of `npm run bench`.
 *
 *   npm run build && node dist/bench/discovery.profile.js [--deals=50000] [--seconds=10] [--out=<dir>]
 *
 * Starts the API and loads the catalogue exactly as the discovery bench does (`startWithCatalogue`),
 * then, for each of its targets (v3 list, regional list): checks the requests, warms up for 3 s, and
 * records a V8 CPU profile of this process (through the inspector; the import is left out, the
 * load generator runs in its own process) while autocannon sends the same requests for the given
 * seconds. Writes `<out>/discovery-<target>.cpuprofile` (open it in Chrome DevTools or speedscope)
 * and prints the top functions by self time (positions mapped back to the TypeScript sources), self
 * time by file or package, and the project's own functions by total (inclusive) time.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { discoveryTargets, fetchBodies, startWithCatalogue } from './discovery.bench';
import { runLoad, summarize } from './support/load';
import { withTempDir } from './support/temp-dir';
import { originalPlace, owner } from './support/source-place';

const WARM_UP_SEC = 3;
const CONNECTIONS = 20;
const SAMPLING_INTERVAL_MICROS = 200;
const TOP = 25;
/** Profile nodes that are states of the VM rather than code. */
const VM_STATES = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function argument(name: string, fallback: string): string {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? found.slice(name.length + 3) : fallback;
}

async function main(): Promise<void> {
  const count = Number(argument('deals', '50000'));
  const seconds = Number(argument('seconds', '10'));
  const out = resolve(argument('out', '.'));
  mkdirSync(out, { recursive: true });
  await withTempDir('discovery-profile', async (dataDir) => {
    const { api, tls, origin, partner, importNote } = await startWithCatalogue(dataDir, count);
    console.log(importNote);
    const session = new Session();
    session.connect();
    try {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_MICROS });
      for (const target of discoveryTargets(partner, count)) {
        await fetchBodies(origin, target, tls.cert);
        const load = (durationSec: number) =>
          runLoad({ origin, paths: target.paths, headers: target.headers, connections: CONNECTIONS, ca: tls.cert, durationSec });
        await load(WARM_UP_SEC);
        await session.post('Profiler.start');
        const run = await load(seconds);
        const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
        const file = join(
          out,
          `discovery-${target.name
            .replace(/[^a-z0-9]+/gi, '-')
            .replace(/^-|-$/g, '')
            .toLowerCase()}.cpuprofile`,
        );
        writeFileSync(file, JSON.stringify(profile));
        const r = summarize([run]);
        console.log(`\n=== ${target.label}; ${target.rotation}`);
        console.log(
          `${CONNECTIONS} connections for ${seconds} s while profiling (sampling every ${SAMPLING_INTERVAL_MICROS} µs): ${r.okPerSec.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms; profile in ${file}`,
        );
        console.log(describe(profile));
      }
    } finally {
      session.disconnect();
      await api.close();
    }
  });
}

/** Where a profile frame's code lives, mapped back to the TypeScript source for the project's own files. */
const place = (frame: ProfileNode['callFrame']) => originalPlace(frame.url, frame.lineNumber, frame.columnNumber);

function describe(profile: CpuProfile): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfMicros = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + dt);
    total += dt;
  });
  const key = (n: ProfileNode) => {
    const { file, line } = place(n.callFrame);
    return `${n.callFrame.functionName || '(anonymous)'}  ${file}${line ? `:${line}` : ''}`;
  };
  const selfByFunction = new Map<string, number>();
  const selfByOwner = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const nativeByCaller = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const node = byId.get(id)!;
    selfByFunction.set(key(node), (selfByFunction.get(key(node)) ?? 0) + micros);
    const who = node.callFrame.url
      ? owner(place(node.callFrame).file)
      : VM_STATES.has(node.callFrame.functionName)
        ? node.callFrame.functionName
        : '(native code)';
    selfByOwner.set(who, (selfByOwner.get(who) ?? 0) + micros);
    if (!node.callFrame.url && !VM_STATES.has(node.callFrame.functionName)) {
      // Native code (builtins, bindings) is only telling beside the JavaScript that called it.
      let caller = parent.get(id);
      while (caller !== undefined && !byId.get(caller)!.callFrame.url) caller = parent.get(caller);
      const k = `${node.callFrame.functionName || '(anonymous native)'}  ←  ${caller === undefined ? '(no JavaScript caller)' : key(byId.get(caller)!)}`;
      nativeByCaller.set(k, (nativeByCaller.get(k) ?? 0) + micros);
    }
    // Inclusive time of the project's own functions: each distinct function once per stack.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!;
      const { file } = place(frame.callFrame);
      if (!/^(libs|apps)\//.test(file)) continue;
      const k = key(frame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + micros);
    }
  }
  const lines = (title: string, m: Map<string, number>, n: number) => [
    title,
    ...[...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `  ${(v / 1000).toFixed(0).padStart(7)} ms ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`),
  ];
  return [
    `sampled ${(total / 1000).toFixed(0)} ms of this process (idle included as "(idle)")`,
    ...lines(`top ${TOP} functions by self time:`, selfByFunction, TOP),
    ...lines('self time by file / package:', selfByOwner, 20),
    ...lines('native self time by the nearest JavaScript caller:', nativeByCaller, 12),
    ...lines(`project functions (libs/, apps/) by total time, callees included:`, inclusive, TOP),
  ].join('\n');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exitCode = 1;
});
