/**
 * What a PostgreSQL server spent on one database over a measured window: committed transactions
 * (`pg_stat_database`), writing transactions (the transaction id counter), WAL bytes (the WAL insert
 * position) and WAL syncs (`pg_stat_wal`), and the CPU time of the server's processes that served it
 * (read from /proc when the server runs on this machine).
 *
 * Every query here runs on the admin connection given, which must be on ANOTHER database than the
 * one measured: its own transactions then count in that other database, and it writes no WAL and
 * takes no transaction id.
 *
 * The statistics (`pg_stat_database`, `pg_stat_wal`) are what each backend flushed to shared
 * memory, and a backend flushes its pending counts at most once a second while busy and, once it
 * goes idle, up to 10 s later (PGSTAT_IDLE_INTERVAL). `pg_stat_force_next_flush()` flushes only
 * the calling session's counts, not those of the service's connections. So statistics are read
 * only after {@link STATS_SETTLE_MS} of quiet, and the window they cover is made wider than the
 * load: the transactions the idle processes make meanwhile are measured beforehand and taken off
 * (see {@link idleRate}). The WAL position and the transaction id counter are read at once.
 *
 * The WAL position and the transaction id counter are the server's: other databases' writes move
 * them too. Where the `pg_walinspect` extension can be made (PostgreSQL 15 and later, contrib), the
 * window's WAL records are also read back and attributed to the database: those touching its
 * blocks (`rel <tablespace>/<database oid>/…`), and every record, commits included, of the
 * transactions that wrote them ({@link PgCounters.between}). The extension lives in a database of
 * its own (`inspector`), never in the one measured.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';

/** PGSTAT_IDLE_INTERVAL (10 s) and a margin: after this long with no load, every backend has flushed its statistics. */
export const STATS_SETTLE_MS = 10_500;

/** Flushed statistics: read after {@link STATS_SETTLE_MS} of quiet. */
export interface PgStats {
  atMs: number;
  xactCommit: number;
  xactRollback: number;
  /** Each database's commits, to tell how many the other databases made meanwhile ({@link othersCommitted}). */
  commitsByDatabase: Map<string, number>;
  /** pg_stat_wal (PostgreSQL 14 and later; null before): WAL syncs and writes, server-wide. */
  walSync: number | null;
  walWrite: number | null;
}

/** Counters that move at once, server-wide. */
export interface PgInstant {
  /** The WAL insert position (`pg_current_wal_insert_lsn()`). */
  lsn: string;
  /** The next transaction id to be assigned: its difference counts the transactions that wrote (anywhere on the server). */
  nextXid: bigint;
}

/** Commits the databases other than `database` made between two readings (those present in both). */
export function othersCommitted(from: PgStats, to: PgStats, database: string): number {
  let n = 0;
  for (const [name, commits] of to.commitsByDatabase)
    if (name !== database && from.commitsByDatabase.has(name)) n += commits - from.commitsByDatabase.get(name)!;
  return n;
}

/** WAL of one window attributed to the database by reading its records back (pg_walinspect). */
export interface AttributedWal {
  /** The records touching the database's blocks and every record of the transactions that wrote them, bytes (full-page images included). */
  bytes: number;
  /** Of which full-page images of the database's blocks. */
  fpiBytes: number;
  /** Commit records of those transactions: the database's writing transactions. */
  commits: number;
  /** Every record of the window, bytes (the rest is other databases' and the server's own). */
  allBytes: number;
}

export class PgCounters {
  private readonly hasStatWal: boolean;

  private constructor(
    private readonly admin: Client,
    readonly database: string,
    readonly serverVersion: number,
    private readonly oid: number,
    private readonly inspector: Client | null,
  ) {
    this.hasStatWal = serverVersion >= 140000;
  }

  /**
   * Counters of `database`, read on `admin` (on another database); with `inspector`, a connection to
   * a database where pg_walinspect can be (or is) made, the window's WAL is also attributed.
   */
  static async open(admin: Client, database: string, inspector: Client | null = null): Promise<PgCounters> {
    const { rows } = await admin.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`);
    const version = Number(rows[0].v);
    if (version < 130000) throw new Error(`PostgreSQL ${version}: the distributed bench needs 13 or later (pg_current_snapshot)`);
    const oid = (await admin.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = $1', [database])).rows[0]?.oid;
    if (oid === undefined) throw new Error(`no database ${database}`);
    return new PgCounters(admin, database, version, Number(oid), inspector);
  }

  /** Makes pg_walinspect in the inspector's database; the reason when it cannot be (then the WAL is counted server-wide only). */
  static async prepareInspector(inspector: Client): Promise<string | null> {
    try {
      await inspector.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
      return null;
    } catch (error) {
      return `pg_walinspect could not be made (${error instanceof Error ? error.message : String(error)})`;
    }
  }

  async stats(): Promise<PgStats> {
    // A fresh view of the shared statistics (not the one cached for this session's transaction).
    await this.admin.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await this.admin.query<{ datname: string; c: string; r: string }>(
      'SELECT datname, xact_commit::text AS c, xact_rollback::text AS r FROM pg_stat_database WHERE datname IS NOT NULL',
    );
    const atMs = performance.now();
    const own = rows.find((r) => r.datname === this.database);
    if (!own) throw new Error(`pg_stat_database has no row for ${this.database}`);
    let walSync: number | null = null;
    let walWrite: number | null = null;
    if (this.hasStatWal) {
      const wal = await this.admin.query<{ s: string; w: string }>('SELECT wal_sync::text AS s, wal_write::text AS w FROM pg_stat_wal');
      walSync = Number(wal.rows[0].s);
      walWrite = Number(wal.rows[0].w);
    }
    return {
      atMs,
      xactCommit: Number(own.c),
      xactRollback: Number(own.r),
      commitsByDatabase: new Map(rows.map((r) => [r.datname, Number(r.c)])),
      walSync,
      walWrite,
    };
  }

  async instant(): Promise<PgInstant> {
    const { rows } = await this.admin.query<{ lsn: string; xid: string }>(
      'SELECT pg_current_wal_insert_lsn()::text AS lsn, pg_snapshot_xmax(pg_current_snapshot())::text AS xid',
    );
    return { lsn: rows[0].lsn, nextXid: BigInt(rows[0].xid) };
  }

  /**
   * WAL bytes and writing transactions between two instants, server-wide; and, with the inspector,
   * attributed to the database (null without it, or when the window's WAL could not be read back:
   * `attributionError` says why).
   */
  async between(
    from: PgInstant,
    to: PgInstant,
  ): Promise<{ walBytes: number; writingXacts: number; attributed: AttributedWal | null; attributionError: string | null }> {
    const { rows } = await this.admin.query<{ d: string }>('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS d', [to.lsn, from.lsn]);
    let attributed: AttributedWal | null = null;
    let attributionError: string | null = null;
    if (this.inspector) {
      try {
        attributed = await this.attribute(from.lsn, to.lsn);
      } catch (error) {
        attributionError = error instanceof Error ? error.message : String(error);
      }
    }
    return { walBytes: Number(rows[0].d), writingXacts: Number(to.nextXid - from.nextXid), attributed, attributionError };
  }

  private async attribute(from: string, to: string): Promise<AttributedWal> {
    // PostgreSQL 15's pg_walinspect refuses an end past the WAL flushed so far.
    const { rows } = await this.inspector!.query<{ bytes: string; fpi: string; commits: string; all_bytes: string }>(
      `WITH r AS MATERIALIZED (
         SELECT xid::text::bigint AS xid, record_length, fpi_length, resource_manager, record_type, coalesce(block_ref, '') ~ $3 AS ours
         FROM pg_get_wal_records_info($1::pg_lsn, least($2::pg_lsn, pg_current_wal_flush_lsn()))),
       x AS (SELECT DISTINCT xid FROM r WHERE ours AND xid <> 0)
       SELECT coalesce(sum(record_length) FILTER (WHERE ours OR xid IN (SELECT xid FROM x)), 0)::text AS bytes,
              coalesce(sum(fpi_length) FILTER (WHERE ours), 0)::text AS fpi,
              count(*) FILTER (WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%' AND xid IN (SELECT xid FROM x))::text AS commits,
              coalesce(sum(record_length), 0)::text AS all_bytes
       FROM r`,
      [from, to, `rel \\d+/${this.oid}/`],
    );
    return {
      bytes: Number(rows[0].bytes),
      fpiBytes: Number(rows[0].fpi),
      commits: Number(rows[0].commits),
      allBytes: Number(rows[0].all_bytes),
    };
  }
}

/** Transactions (and WAL syncs) a second the processes make with no load: two settled readings apart. */
export function idleRate(from: PgStats, to: PgStats): { xactsPerSec: number; walSyncsPerSec: number } {
  const sec = (to.atMs - from.atMs) / 1000;
  return {
    xactsPerSec: Math.max(0, (to.xactCommit - from.xactCommit) / sec),
    walSyncsPerSec: to.walSync === null || from.walSync === null ? 0 : Math.max(0, (to.walSync - from.walSync) / sec),
  };
}

/** Linux reports /proc/<pid>/stat in USER_HZ ticks, 100 a second on every mainstream build. */
const TICK_NS = 10_000_000;

/** CPU time of one process, ns: /proc/<pid>/schedstat (exact; a PostgreSQL process has one thread), else utime + stime. */
function processCpuNs(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * TICK_NS;
    } catch {
      return null;
    }
  }
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** The server's own processes that work for every database: they write and sync the WAL and the data files. */
const SHARED_PROCESS = /: (walwriter|checkpointer|background writer|autovacuum launcher|autovacuum worker)\b/;

/** The CPU time the server's processes used over a window, ns. */
export interface PgCpu {
  /** The backends connected to the measured database (those that ended within the window too, up to the last sample). */
  backendsNs: number;
  /** The server's shared processes (WAL writer, checkpointer, background writer, autovacuum): they serve every database. */
  sharedNs: number;
  /** Backends of the database seen in the window. */
  backends: number;
}

/**
 * Samples the CPU time of the server's processes from /proc: its backends on `database` (their
 * command line names it: `postgres: <cluster>: <user> <database> <client> <state>`) and its shared
 * processes. A backend that ends within the window counts up to its last sample (every
 * {@link PgCpuMeter.SAMPLE_MS}); one that starts counts from 0.
 */
export class PgCpuMeter {
  static readonly SAMPLE_MS = 250;
  private first = new Map<number, number>();
  private last = new Map<number, { ns: number; shared: boolean }>();
  private timer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly postmaster: number,
    private readonly database: string,
  ) {}

  /** A meter for the server `admin` is connected to, or null when that server does not run on this machine (its backend is not in /proc). */
  static async forServer(admin: Client, database: string): Promise<PgCpuMeter | null> {
    const { rows } = await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const postmaster = parentOf(rows[0].pid);
    if (postmaster === null) return null;
    // The same server: the backend's command line is a PostgreSQL one.
    try {
      if (!readFileSync(`/proc/${rows[0].pid}/cmdline`, 'utf8').startsWith('postgres')) return null;
    } catch {
      return null;
    }
    return new PgCpuMeter(postmaster, database);
  }

  private read(): Map<number, { ns: number; shared: boolean }> {
    const found = new Map<number, { ns: number; shared: boolean }>();
    const needle = ` ${this.database} `;
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || pid <= 0) continue;
      let cmdline: string;
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (!cmdline.startsWith('postgres:')) continue;
      const shared = SHARED_PROCESS.test(cmdline);
      if (!shared && !cmdline.includes(needle)) continue;
      if (parentOf(pid) !== this.postmaster) continue;
      const ns = processCpuNs(pid);
      if (ns !== null) found.set(pid, { ns, shared });
    }
    return found;
  }

  /** Starts a window: the processes' CPU time now, then a sample every {@link SAMPLE_MS}. */
  start(): void {
    this.stopSampling();
    const now = this.read();
    this.first = new Map([...now].map(([pid, p]) => [pid, p.ns]));
    this.last = now;
    this.timer = setInterval(() => this.sample(), PgCpuMeter.SAMPLE_MS);
    this.timer.unref();
  }

  private sample(): void {
    for (const [pid, p] of this.read()) this.last.set(pid, p);
  }

  /** Ends the window. */
  stop(): PgCpu {
    this.sample();
    this.stopSampling();
    let backendsNs = 0;
    let sharedNs = 0;
    let backends = 0;
    for (const [pid, p] of this.last) {
      const used = p.ns - (this.first.get(pid) ?? 0);
      if (p.shared) sharedNs += used;
      else {
        backendsNs += used;
        backends++;
      }
    }
    return { backendsNs, sharedNs, backends };
  }

  private stopSampling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
