/**
 * What the keys of new streams cost the event log's writer: a purchase's appends (the streams and
 * event sizes of a stored-card purchase) written by the event log's own write program
 * (`prepareWrites`, in group transactions on a `synchronous=FULL` WAL file, as its write thread
 * does), with the purchase ids drawn at random (the older form) or time-ordered
 * (`RandomIdGenerator.short()`), on a log that already holds `--prefill` purchases. The CPU
 * time (user and system, of this process) and wall time of `--purchases` more are printed, and the ordered figures as a ratio of the
 * random ones. Not part of `npm run bench`.
 *
 *   npm run build && node dist/bench/event-log-locality.js [--prefill=40000] [--purchases=28000] [--users=500] [--rounds=2]
 *
 * The per-user charge-lock streams (keyed by the user's UUID) are written as the purchase path
 * writes them in both cases; `--no-locks` writes those two events to the purchase's stream
 * instead, to show what they cost.
 */
import { pooledRandomText, RandomIdGenerator } from '@deals/kernel';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDurableDatabase } from '@deals/adapters/sqlite/open-durable-database';
import { EVENTS_SCHEMA, prepareWrites } from '@deals/adapters/event-store/sqlite/sqlite-event-log.writes';
import { withTempDir } from './support/temp-dir';

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

/** Purchases a group commit holds on the hot deal (the purchases bench's mean batch was ~14 commands). */
const PER_COMMIT = 14;
/** Event data and metadata the size of a stored-card purchase's (bytes of JSON, from a bench run's log). */
const SIZES: Record<string, number> = {
  ChargeBegun: 113,
  PurchaseReserved: 665,
  UnitsHeld: 206,
  UnitsSold: 206,
  PurchasePaid: 311,
  CouponIssued: 380,
  ChargeEnded: 81,
};
const METADATA = JSON.stringify({ text: 'm'.repeat(230) });

interface Result {
  cpuMs: number;
  wallMs: number;
}

function run(dir: string, ids: () => string, options: { prefill: number; purchases: number; users: number; locks: boolean }): Result {
  const file = join(dir, 'events.sqlite');
  const db: Database.Database = openDurableDatabase(file);
  db.exec(EVENTS_SCHEMA);
  const { append } = prepareWrites(db);
  const users = Array.from({ length: options.users }, () => randomUUID());
  const data = new Map(Object.entries(SIZES).map(([type, size]) => [type, JSON.stringify({ text: 'd'.repeat(size - 11) })]));
  let n = 0;
  const commit = db.transaction((count: number) => {
    const revisions = new Map<string, unknown>();
    const add = (streamId: string, type: string) =>
      append({ streamId, events: [[randomUUID(), type, data.get(type)!, METADATA]], expected: 'any' }, revisions);
    for (let i = 0; i < count; i++) {
      const purchase = ids();
      const lock = options.locks ? `charge-lock-${users[n++ % users.length]}` : `purchase-${purchase}`;
      add(lock, 'ChargeBegun');
      add(`purchase-${purchase}`, 'PurchaseReserved');
      add('inventory-hot', 'UnitsHeld');
      add('inventory-hot', 'UnitsSold');
      add(`purchase-${purchase}`, 'PurchasePaid');
      add(`coupon-${purchase}-1`, 'CouponIssued');
      add(lock, 'ChargeEnded');
    }
  });
  const write = (purchases: number) => {
    for (let done = 0; done < purchases; done += PER_COMMIT) commit(Math.min(PER_COMMIT, purchases - done));
  };
  write(options.prefill);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  write(options.purchases);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  db.close();
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs };
}

async function main(): Promise<void> {
  const options = {
    prefill: Number(arg('prefill', '40000')),
    purchases: Number(arg('purchases', '28000')),
    users: Number(arg('users', '500')),
    locks: !process.argv.includes('--no-locks'),
  };
  const rounds = Number(arg('rounds', '2'));
  const random = pooledRandomText(12);
  const ordered = new RandomIdGenerator();
  console.log(
    `${options.purchases} purchases (7 events each${options.locks ? ', 2 of them in per-user charge-lock streams' : ', the lock events in the purchase stream'}, ${options.users} users), ` +
      `${PER_COMMIT} a commit, after ${options.prefill} purchases already in the log; alternating, ${rounds} round(s)`,
  );
  const line = (label: string, r: Result) =>
    `${label.padEnd(24)} CPU ${(r.cpuMs / options.purchases).toFixed(4)} ms a purchase, wall ${(r.wallMs / 1000).toFixed(2)} s`;
  for (let round = 1; round <= rounds; round++) {
    const r = await withTempDir('locality-random', async (dir) => run(dir, random, options));
    const o = await withTempDir('locality-ordered', async (dir) => run(dir, () => ordered.short(), options));
    console.log(line('random ids (16 chars)', r));
    console.log(line('time-ordered ids', o));
    console.log(`round ${round}: ordered / random: CPU ${(o.cpuMs / r.cpuMs).toFixed(2)}, wall ${(o.wallMs / r.wallMs).toFixed(2)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
