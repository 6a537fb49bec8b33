/**
 * How busy the machine was while a bench measured: this process, and everything else. The machine
 * may be shared (tests running in another shell); figures taken while other processes use a core
 * are skewed, so the benches print this beside them rather than trusting a quiet machine.
 */
import { readFileSync } from 'node:fs';

/** Linux reports /proc/stat in USER_HZ ticks, 100 a second on every mainstream build. */
const TICK_MICROS = 10_000;

interface SystemTimes {
  busy: number;
  steal: number;
}

function systemTimes(): SystemTimes | null {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
    return { busy: (user + nice + system + irq + softirq) * TICK_MICROS, steal: (steal || 0) * TICK_MICROS };
  } catch {
    return null;
  }
}

/**
 * CPU time of this process's main thread (the event loop that serves every request), in µs, from
 * /proc/self/task/<pid>/stat (utime and stime, fields 14 and 15); null where there is none.
 */
function mainThreadMicros(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MICROS;
  } catch {
    return null;
  }
}

/** CPU used while a measurement ran, in cores (Linux only; null elsewhere). */
export interface CpuUse {
  /** Cores this process (the servers under test) kept busy. */
  ownCores: number;
  /**
   * Of {@link ownCores}, the share of the main thread (the event loop; at most 1); null when
   * unknown. Near 1, the event loop is the limit, whatever cores the other threads leave idle.
   */
  mainThreadCores: number | null;
  /** Cores busy with processes other than this one and its load generator. */
  otherCores: number;
  /** Cores the hypervisor took away (steal). */
  stealCores: number;
}

/**
 * Starts measuring; the returned function, given the CPU µs a child process of the bench used
 * meanwhile (the load generator; 0 when there is none), tells the CPU this process and all other
 * processes used since.
 */
export function startCpuMeter(): (childMicros: number) => CpuUse | null {
  const before = systemTimes();
  const own = process.cpuUsage();
  const mainBefore = mainThreadMicros();
  const started = process.hrtime.bigint();
  return (childMicros) => {
    const after = systemTimes();
    if (!before || !after) return null;
    const wallMicros = Number(process.hrtime.bigint() - started) / 1000;
    const ownNow = process.cpuUsage(own);
    const mainNow = mainThreadMicros();
    const other = after.busy - before.busy - ownNow.user - ownNow.system - childMicros;
    return {
      ownCores: (ownNow.user + ownNow.system) / wallMicros,
      mainThreadCores: mainBefore === null || mainNow === null ? null : (mainNow - mainBefore) / wallMicros,
      otherCores: Math.max(0, other / wallMicros),
      stealCores: (after.steal - before.steal) / wallMicros,
    };
  };
}

/** Averages interference figures (null when none could be taken). */
export function meanCpuUse(all: Array<CpuUse | null>): CpuUse | null {
  const known = all.filter((i): i is CpuUse => i !== null);
  if (known.length === 0) return null;
  const mean = (pick: (i: CpuUse) => number) => known.reduce((s, i) => s + pick(i), 0) / known.length;
  const mains = known.filter((i) => i.mainThreadCores !== null);
  const mainThreadCores = mains.length ? mains.reduce((s, i) => s + i.mainThreadCores!, 0) / mains.length : null;
  return {
    ownCores: mean((i) => i.ownCores),
    mainThreadCores,
    otherCores: mean((i) => i.otherCores),
    stealCores: mean((i) => i.stealCores),
  };
}

export function describeInterference(i: CpuUse | null): string {
  if (!i) return 'CPU used by other processes: unknown (no /proc/stat)';
  const steal = i.stealCores >= 0.005 ? `, hypervisor steal ${i.stealCores.toFixed(2)} cores` : '';
  return `other processes used ${i.otherCores.toFixed(2)} cores meanwhile${steal}${i.otherCores > 0.2 ? ' (figures skewed: machine busy)' : ''}`;
}
