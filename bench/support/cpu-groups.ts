/**
 * cgroup v1 CPU groups for benches that hold each process to a CPU budget of its own: a group of
 * the `cpu` controller (a CFS quota) and one of the same name in `cpuacct` (the CPU time its
 * processes used, in ns), as bench/with-cpu-quota.sh does for a whole command. Needs root and both
 * controllers mounted as cgroup v1 under /sys/fs/cgroup (`cpu` and `cpuacct`, apart or joined).
 *
 * A process is started inside its group from its first instruction: a shell writes its own pid into
 * the groups' `cgroup.procs`, then `exec`s the command, so every thread and child it makes is
 * counted. Groups are removed by {@link CpuGroups.close} (their processes killed first) and, should
 * the bench be interrupted, by the SIGINT/SIGTERM handler {@link CpuGroups} installs while it has any.
 */
import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopChild } from './service-processes';

const ROOT = '/sys/fs/cgroup';
/** The CFS period: a quota of 0.3 CPU is 3 ms a period (the kernel takes no quota under 1 ms). */
export const DEFAULT_PERIOD_US = 10_000;
const MIN_QUOTA_US = 1_000;

/** Where the `cpu` and `cpuacct` hierarchies are, or why there are none. */
function controllers(): { cpu: string; cpuacct: string } | string {
  const cpu = [join(ROOT, 'cpu'), join(ROOT, 'cpu,cpuacct')].find((d) => existsSync(join(d, 'cpu.cfs_quota_us')));
  const cpuacct = [join(ROOT, 'cpuacct'), join(ROOT, 'cpu,cpuacct')].find((d) => existsSync(join(d, 'cpuacct.usage')));
  if (!cpu || !cpuacct) return `no cgroup v1 cpu and cpuacct controllers under ${ROOT} (cgroup v2 only, or not Linux)`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'CPU groups need root';
  return { cpu, cpuacct };
}

/** Whether CPU groups can be made here; the reason when not. */
export function cpuGroupsUnavailable(): string | null {
  const found = controllers();
  return typeof found === 'string' ? found : null;
}

/** The counters of one group at one moment. */
export interface GroupSample {
  /** CPU time of the group's processes since it was made, ns (cpuacct.usage). */
  usageNs: number;
  /** CFS periods in which the group ran, and those in which it used up its quota (cpu.stat). */
  periods: number;
  throttled: number;
  throttledNs: number;
}

export class CpuGroup {
  readonly cpuDir: string;
  readonly cpuacctDir: string;
  /** CPUs the quota allows (null: no quota). */
  cpus: number | null = null;

  constructor(
    readonly name: string,
    dirs: { cpu: string; cpuacct: string },
    private readonly periodUs: number,
  ) {
    this.cpuDir = join(dirs.cpu, name);
    this.cpuacctDir = join(dirs.cpuacct, name);
    mkdirSync(this.cpuDir, { recursive: true });
    if (this.cpuacctDir !== this.cpuDir) mkdirSync(this.cpuacctDir, { recursive: true });
    writeFileSync(join(this.cpuDir, 'cpu.cfs_period_us'), String(periodUs));
    this.setCpus(null);
  }

  /** The `cgroup.procs` files a process is written into to join the group. */
  get procsFiles(): string[] {
    return [...new Set([join(this.cpuDir, 'cgroup.procs'), join(this.cpuacctDir, 'cgroup.procs')])];
  }

  /** Sets the quota to `cpus` CPUs' worth of time (null: none); takes effect at once for the running processes. */
  setCpus(cpus: number | null): void {
    const quota = cpus === null ? -1 : Math.round(cpus * this.periodUs);
    if (cpus !== null && quota < MIN_QUOTA_US)
      throw new Error(`a quota of ${cpus} CPU is under ${MIN_QUOTA_US} µs a ${this.periodUs} µs period, which the kernel refuses`);
    writeFileSync(join(this.cpuDir, 'cpu.cfs_quota_us'), String(quota));
    this.cpus = cpus;
  }

  /** Moves a running process (all its threads) into the group. */
  adopt(pid: number): void {
    for (const file of this.procsFiles) writeFileSync(file, String(pid));
  }

  sample(): GroupSample {
    const stat = Object.fromEntries(
      readFileSync(join(this.cpuDir, 'cpu.stat'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(' ') as [string, string]),
    );
    return {
      usageNs: Number(readFileSync(join(this.cpuacctDir, 'cpuacct.usage'), 'utf8')),
      periods: Number(stat.nr_periods ?? 0),
      throttled: Number(stat.nr_throttled ?? 0),
      throttledNs: Number(stat.throttled_time ?? 0),
    };
  }

  /** Pids still in the group. */
  pids(): number[] {
    const pids = new Set<number>();
    for (const file of this.procsFiles) for (const line of readFileSync(file, 'utf8').split('\n')) if (line.trim()) pids.add(Number(line));
    return [...pids];
  }

  /** Removes the group's directories; a process still in it is moved to the root group first. */
  remove(): void {
    for (const [dir, root] of [
      [this.cpuDir, join(this.cpuDir, '..')],
      [this.cpuacctDir, join(this.cpuacctDir, '..')],
    ]) {
      if (!existsSync(dir)) continue;
      try {
        for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n'))
          if (line.trim()) writeFileSync(join(root, 'cgroup.procs'), line.trim());
      } catch {
        // a process that exits meanwhile cannot be moved, and need not be
      }
      for (let attempt = 0; ; attempt++) {
        try {
          rmdirSync(dir);
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') break;
          if (attempt >= 50) throw error;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); // a process still leaving
        }
      }
    }
  }
}

/** Every set of groups not yet closed, for the signal handler. */
const open = new Set<CpuGroups>();
let handlersInstalled = false;

function onSignal(signal: NodeJS.Signals): void {
  for (const groups of open) groups.closeNow();
  process.stderr.write(`${signal}: the bench's processes were killed and its CPU groups removed\n`);
  process.exit(signal === 'SIGINT' ? 130 : 143);
}

/**
 * The groups of one bench run, named `<prefix>-<name>` (e.g. `deals-bench-1a2b3c-api-1`), and the
 * processes started in them. {@link close} kills those processes and removes the groups; call it
 * in a `finally`.
 */
export class CpuGroups {
  private readonly dirs: { cpu: string; cpuacct: string };
  private readonly groups = new Map<string, CpuGroup>();
  private readonly children = new Set<ChildProcess>();
  /** Run on {@link closeNow} (a signal), after the processes are killed: e.g. dropping a database. */
  onAbort: Array<() => void> = [];

  constructor(
    readonly prefix: string,
    private readonly periodUs = DEFAULT_PERIOD_US,
  ) {
    const found = controllers();
    if (typeof found === 'string') throw new Error(found);
    this.dirs = found;
    open.add(this);
    if (!handlersInstalled) {
      handlersInstalled = true;
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
    }
  }

  /** The group of that name, made (without a quota) on first use. */
  group(name: string): CpuGroup {
    let group = this.groups.get(name);
    if (!group) {
      group = new CpuGroup(`${this.prefix}-${name}`, this.dirs, this.periodUs);
      this.groups.set(name, group);
    }
    return group;
  }

  /** Starts `command args` inside `group` (it joins the group before it runs), and tracks it for {@link close}. */
  spawn(group: CpuGroup, command: string, args: string[], options: SpawnOptions): ChildProcess {
    const files = group.procsFiles;
    const script = `${files.map((_, i) => `echo $$ > "$${i + 1}"`).join(' && ')} && shift ${files.length} && exec "$@"`;
    const child = spawn('/bin/sh', ['-c', script, 'sh', ...files, command, ...args], options);
    this.track(child);
    return child;
  }

  /** Tracks a process started elsewhere (killed by {@link close} if still running). */
  track(child: ChildProcess): void {
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
  }

  /** Stops one process: SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(child: ChildProcess, graceMs = 5_000): Promise<void> {
    return stopChild(child, graceMs);
  }

  /** Stops every process started here (SIGTERM, then SIGKILL), then removes every group. */
  async close(): Promise<void> {
    await Promise.all([...this.children].map((child) => this.stop(child)));
    this.removeGroups();
    open.delete(this);
  }

  /** What a signal does: kill at once, run {@link onAbort}, remove the groups. */
  closeNow(): void {
    for (const child of this.children) child.kill('SIGKILL');
    for (const group of this.groups.values())
      for (const pid of group.pids()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    for (const abort of this.onAbort) {
      try {
        abort();
      } catch {
        // best effort: the process is exiting
      }
    }
    this.removeGroups();
    open.delete(this);
  }

  private removeGroups(): void {
    const failures: string[] = [];
    for (const group of this.groups.values()) {
      try {
        group.remove();
      } catch (error) {
        failures.push(`${group.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.groups.clear();
    if (failures.length) process.stderr.write(`CPU groups left behind: ${failures.join('; ')}\n`);
  }
}
