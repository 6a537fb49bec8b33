/**
 * What a stored-card purchase asks of PostgreSQL in the distributed mode, statement by statement:
 * one API replica and a worker (built, no CPU quota) on a database made for the run, the purchases
 * bench's catalogue and users; every user buys once (caches warm, as under a steady load), then
 * statement logging is turned on for that database alone (`log_statement = all`, its sessions
 * restarted), and a measured load runs. Prints the statements a purchase by their text (each one
 * outside BEGIN/COMMIT is a transaction of its own) and the WAL a purchase by relation (read back
 * with pg_walinspect). Not part of `npm run bench`.
 *
 *   npm run build && node dist/bench/postgres-census.js [--mode=hot|many] [--purchases=1000] [--connections=50] [--users=400] [--timeline=N]
 *
 * `--timeline=N` also prints the log of the last N purchases line by line with the milliseconds
 * between lines: where a lone purchase (`--connections=1`) waits.
 *
 * Needs a PostgreSQL server on this machine whose log this process can read (`POSTGRES_LOG`, default
 * Debian's `/var/log/postgresql/postgresql-15-main.log`, with the default line prefix
 * `%m [%p] %q%u@%d `), superuser rights on it (`POSTGRES_BENCH_URL`), and Redis (`REDIS_BENCH_URL`).
 */
import { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { benchDeals, makeBuyers, MANY_DEALS, purchaseBodies } from './purchases.bench';
import { BENCH_POSTGRES as PG, databaseUrl, deleteRedisKeys } from './support/bench-servers';
import { distributedEnv, startService } from './support/distributed-service';
import { runLoad } from './support/load';
import { stopChild } from './support/service-processes';
import { withTempDir } from './support/temp-dir';

const LOG = process.env.POSTGRES_LOG ?? '/var/log/postgresql/postgresql-15-main.log';

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const mode = arg('mode', 'hot') as 'hot' | 'many';
const purchases = Number(arg('purchases', '1000'));
const connections = Number(arg('connections', '50'));
const users = Number(arg('users', '400'));
/** With `--timeline=N`: the server's log of the run's last N purchases' time, line by line, milliseconds apart. */
const timeline = Number(arg('timeline', '0'));
/** How long a child is given to stop after SIGTERM. */
const STOP_MS = 15_000;
/** Kept short of the statement so that the same statement with other lists of values counts as one. */
const TEXT_CHARS = 110;

/** The statements the server logged for `database` between two offsets of its log, by their text. */
function statementsLogged(database: string, from: number, to: number): Map<string, number> {
  const fd = openSync(LOG, 'r');
  const bytes = Buffer.alloc(to - from);
  readSync(fd, bytes, 0, bytes.length, from);
  closeSync(fd);
  const counts = new Map<string, number>();
  let current: { database: string; text: string } | null = null;
  const count = () => {
    if (!current || current.database !== database) return;
    const m = /^(?:statement|execute [^:]*): (.*)$/.exec(current.text);
    if (!m) return;
    const text = m[1]
      .replace(/\s+/g, ' ')
      .replace(/'[^']*'/g, "'?'")
      .replace(/\$\d+/g, '$')
      .slice(0, TEXT_CHARS);
    counts.set(text, (counts.get(text) ?? 0) + 1);
  };
  for (const line of bytes.toString('utf8').split('\n')) {
    // A line of the server's own processes (no user@database) starts an entry too.
    if (/^\S+ \S+ \S+ \[\d+\] /.test(line)) {
      count();
      const m = /^\S+ \S+ \S+ \[\d+\] \S*@(\S*) (\w+): {2}(.*)$/.exec(line);
      current = m && m[2] === 'LOG' ? { database: m[1], text: m[3] } : null;
    } else if (current) current.text += ` ${line.trim()}`;
  }
  count();
  return counts;
}

/**
 * The log lines of `database` in the last `purchases` purchases' stretch of the log (from the
 * `purchases`-th last lookup of a user on), each with the milliseconds since the one before: where a
 * lone purchase waits between its statements.
 */
function printTimeline(database: string, from: number, to: number, purchases: number): void {
  const fd = openSync(LOG, 'r');
  const bytes = Buffer.alloc(to - from);
  readSync(fd, bytes, 0, bytes.length, from);
  closeSync(fd);
  const lines = bytes
    .toString('utf8')
    .split('\n')
    .map((line) => /^(\S+ \S+) \S+ \[(\d+)\] \S*@(\S*) (\w+): {2}(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && m[3] === database && m[4] === 'LOG');
  const starts = lines.flatMap((m, i) => (/FROM (\w+\.)?"?user/i.test(m[5]) || /users?_details/.test(m[5]) ? [i] : []));
  const first = starts.length >= purchases ? starts[starts.length - purchases] : 0;
  let before: number | null = null;
  process.stdout.write(`\ntimeline of the last ${purchases} purchase(s): ms since the line before, backend pid, statement\n`);
  for (const m of lines.slice(first)) {
    const at = Date.parse(m[1].replace(' ', 'T') + 'Z');
    process.stdout.write(
      `${before === null ? '' : (at - before).toFixed(0).padStart(5)} ${m[2].padStart(7)} ${m[5].replace(/\s+/g, ' ').slice(0, 150)}\n`,
    );
    before = at;
  }
}

async function main() {
  statSync(LOG); // fails early, naming the file, when the log is not readable here
  const admin = new Client({ connectionString: PG });
  await admin.connect();
  const database = `deals_census_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const started: ChildProcess[] = [];
  try {
    await withTempDir('census', async (dataDir) => {
      const env = distributedEnv(dataDir, database, database);
      const records = benchDeals(new Date(), MANY_DEALS + 1);
      const { apiKey, apis, ca } = await startService(env, { partner: 'Census', deals: records, started });
      const { origin } = apis[0];
      const deals = records.map((r) => ({ id: r.id, price: r.current_price }));
      const buyers = await makeBuyers(origin, ca, apiKey, users);
      const bodies = purchaseBodies(buyers, deals.slice(0, MANY_DEALS), deals[MANY_DEALS], mode);
      const load = (amount: number) =>
        runLoad({
          origin,
          paths: [`/purchases?api_key=${apiKey}`],
          connections,
          ca,
          durationSec: 0,
          amount,
          post: { template: '{item}', items: bodies },
        });
      // Every user (and on 200 deals every deal) bought once: the caches as a steady load keeps them.
      await load(Math.max(users, mode === 'many' ? 2 * MANY_DEALS : 0) + connections);
      await admin.query(`ALTER DATABASE ${database} SET log_statement = 'all'`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database]);
      await sleep(2_000);
      await load(2 * connections); // the pools' connections opened again, now logging
      await sleep(1_000);
      const lsnBefore = (await admin.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn;
      const logBefore = statSync(LOG).size;
      const run = await load(purchases);
      await sleep(1_500); // the worker's pages of the last purchases
      const lsnAfter = (await admin.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn;
      const logAfter = statSync(LOG).size;
      await admin.query(`ALTER DATABASE ${database} RESET log_statement`);
      const ok = run.ok;
      if (ok === 0) throw new Error(`no purchase was answered 2xx (${run.non2xx} other answers, ${run.errors} errors)`);
      if (logAfter < logBefore) throw new Error(`${LOG} was rotated or truncated during the run: its statements are lost`);
      process.stdout.write(
        `${mode === 'hot' ? 'hot deal' : `${MANY_DEALS} deals`}: ${ok} purchases answered 2xx (${run.non2xx} other) ` +
          `in ${run.durationSec.toFixed(1)} s, ${connections} connections, ${users} users; one API replica and a worker, no quota\n`,
      );
      if (timeline > 0) printTimeline(database, logBefore, logAfter, timeline);
      const statements = statementsLogged(database, logBefore, logAfter);
      const all = [...statements.values()].reduce((a, b) => a + b, 0);
      process.stdout.write(`\nstatements a purchase: ${(all / ok).toFixed(2)}\n`);
      for (const [text, n] of [...statements].sort((a, b) => b[1] - a[1]).slice(0, 40))
        process.stdout.write(`${(n / ok).toFixed(2).padStart(7)}  ${text}\n`);
      const db = new Client({ connectionString: databaseUrl(database) });
      await db.connect();
      try {
        await db.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
        const { rows } = await db.query<{ relation: string; records: string; bytes: string }>(
          `WITH r AS (
             SELECT record_length, resource_manager, record_type,
                    (regexp_match(block_ref, 'rel \\d+/(\\d+)/(\\d+)'))[1]::oid AS db,
                    (regexp_match(block_ref, 'rel \\d+/(\\d+)/(\\d+)'))[2]::oid AS file
               FROM pg_get_wal_records_info($1, $2))
           SELECT coalesce(c.relname, resource_manager || ' ' || record_type) AS relation, count(*) AS records, sum(record_length) AS bytes
             FROM r LEFT JOIN pg_class c ON c.relfilenode = r.file AND r.db = (SELECT oid FROM pg_database WHERE datname = current_database())
            WHERE r.db IS NULL OR r.db = (SELECT oid FROM pg_database WHERE datname = current_database())
            GROUP BY 1 ORDER BY 3 DESC`,
          [lsnBefore, lsnAfter],
        );
        const total = rows.reduce((a, r) => a + Number(r.bytes), 0);
        process.stdout.write(`\nWAL a purchase: ${(total / ok).toFixed(0)} B (records of this database's blocks, and those of none)\n`);
        for (const r of rows.slice(0, 30))
          process.stdout.write(
            `${(Number(r.bytes) / ok).toFixed(0).padStart(7)} B ${(Number(r.records) / ok).toFixed(2).padStart(6)} records  ${r.relation}\n`,
          );
      } finally {
        await db.end();
      }
    });
  } finally {
    // Stopped before their keys are deleted: a stopping worker still writes some.
    await Promise.all(started.map((child) => stopChild(child, STOP_MS)));
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    await deleteRedisKeys(database);
  }
}

// Output cut short (piped into `head`) must not end the run before it stops its children.
process.stdout.on('error', () => undefined);

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`postgres-census: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
