/**
 * The embedded event store (`SqliteEventStore`) against raw better-sqlite3 on the same disk.
 *
 * Appends: concurrent single-event appends (with expected-revision checks) from many "clients",
 * each appending to its own stream, on a fresh SQLite file in WAL mode with synchronous=FULL, so
 * the store's group commit batches what arrives in one tick into one transaction and one sync.
 * Against: a raw better-sqlite3 loop on another fresh file with the same table, WAL and
 * synchronous=FULL, one transaction (one sync) per insert: the disk's sync-bound commit rate. A
 * ratio above 1 is group commit at work (aim: ≥ 1).
 *
 * Full-log read: `readAll` paging 1000 events at a time over the whole log, decoding every event.
 * Against: raw `SELECT * … ORDER BY position` iteration of the same rows on a second, read-only
 * connection, without decoding. Passes of the two alternate, so both see the same cache state.
 */
import { SqliteEventStore } from '@deals/adapters';
import { appendToStream, LogPosition, NewEvent } from '@deals/kernel';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BenchOptions, BenchRow, row } from './support/bench-row';
import { describeInterference, startCpuMeter } from './support/cpu-meter';
import { percentile } from './support/percentile';
import { withTempDir } from './support/temp-dir';
// The store's own table, so the raw loop inserts into exactly what the store writes.
import { EVENTS_SCHEMA } from '@deals/adapters/event-store/sqlite/sqlite-event-log.writes';

const PAGE = 1000;
/** The read passes last at least this long (and are at least {@link MIN_READ_PASSES}), each side. */
const READ_SECONDS = { quick: 0.5, full: 2 };
const MIN_READ_PASSES = 3;

/** A deal-sized event (about 600 bytes of JSON), like those the catalogue appends. */
function benchEvent(client: number, n: number): NewEvent {
  return {
    id: randomUUID(),
    type: 'DealPriceChanged',
    data: {
      dealId: `bench-deal-${client}`,
      title: `Bench deal ${client}: two-course dinner for two at a well-loved neighbourhood bistro`,
      current_price: 4900 + n,
      value: 9800,
      cost: 2400,
      currency: 'USD',
      reason: 'scheduled repricing',
      tags: ['restaurants', 'dinner', 'local', 'bench'],
      locations: [{ name: 'Main Street', lat: 40.7128, lng: -74.006, phone: '(212) 555-0100' }],
    },
    metadata: {
      occurredAt: new Date().toISOString(),
      partnerId: 'bench-partner',
      actor: 'partner:bench-partner',
      requestId: randomUUID(),
      correlationId: randomUUID(),
    },
  };
}

export async function eventStoreBench(options: BenchOptions): Promise<BenchRow[]> {
  return withTempDir('event-store', async (dir) => {
    const meter = startCpuMeter();
    const raw = rawCommits(join(dir, 'raw.sqlite'), options);
    const file = join(dir, 'events.sqlite');
    const store = new SqliteEventStore(file);
    try {
      const appends = await groupCommitAppends(store, options);
      const reads = await fullLogReads(store, file, appends.count, options.quick ? READ_SECONDS.quick : READ_SECONDS.full);
      const interference = describeInterference(meter(0));
      return [
        row('event store appends/s', appends.perSec, 'appends/s', 'raw insert loop, 1 txn + sync per insert', raw.perSec, {
          aim: { min: 1 },
          limitUnit: 'commits/s',
          notes: [
            `appends: ${appends.count} single-event appends from ${options.appendClients} concurrent clients (one stream each, ` +
              `expected-revision checked) in ${appends.seconds.toFixed(2)} s; append latency p50 ${appends.p50Ms.toFixed(2)} ms, p99 ${appends.p99Ms.toFixed(2)} ms`,
            `raw: ${raw.count} autocommit inserts in ${raw.seconds.toFixed(2)} s, WAL + synchronous=FULL, same table and event size`,
          ],
        }),
        row('event store readAll events/s', reads.store.perSec, 'events/s', 'raw SELECT iteration of the same rows', reads.raw.perSec, {
          limitUnit: 'rows/s',
          notes: [
            `reads: ${reads.passes} alternating passes over the whole log (${appends.count} events) each side; ` +
              `readAll pages of ${PAGE} with JSON decoding vs one raw SELECT … ORDER BY position .iterate()`,
            `event store bench: ${interference}`,
          ],
        }),
      ];
    } finally {
      await store.close();
    }
  });
}

/** One autocommit insert (one transaction, one WAL sync) after another, for up to `rawCommitSec`. */
function rawCommits(file: string, options: BenchOptions): { count: number; seconds: number; perSec: number } {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    if (db.pragma('synchronous', { simple: true }) !== 2) throw new Error('raw: synchronous is not FULL');
    db.exec(EVENTS_SCHEMA); // the very table the store creates
    const insert = db.prepare('INSERT INTO events (id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
    const sample = benchEvent(0, 0);
    const data = JSON.stringify(sample.data);
    const metadata = JSON.stringify(sample.metadata);
    const limitMs = options.rawCommitSec * 1000;
    const start = performance.now();
    let count = 0;
    while (count < options.appends && performance.now() - start < limitMs) {
      insert.run(
        randomUUID(),
        `raw-${count % options.appendClients}`,
        Math.floor(count / options.appendClients),
        sample.type,
        data,
        metadata,
      );
      count++;
    }
    const seconds = (performance.now() - start) / 1000;
    return { count, seconds, perSec: count / seconds };
  } finally {
    db.close();
  }
}

/**
 * `options.appends` single-event appends (expected revision checked) from `options.appendClients`
 * concurrent clients, one stream each, on `store`; also the purchases bench's limit.
 */
export async function groupCommitAppends(store: SqliteEventStore, options: Pick<BenchOptions, 'appends' | 'appendClients'>) {
  const perClient = Math.ceil(options.appends / options.appendClients);
  const latencies = new Float64Array(perClient * options.appendClients);
  let done = 0;
  const client = async (c: number) => {
    for (let n = 0; n < perClient; n++) {
      const event = benchEvent(c, n);
      const t0 = performance.now();
      await appendToStream(store, `bench-${c}`, [event], n === 0 ? 'no_stream' : n - 1);
      latencies[done++] = performance.now() - t0;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: options.appendClients }, (_, c) => client(c)));
  const seconds = (performance.now() - start) / 1000;
  const head = await store.head();
  if (Number(head) !== done) throw new Error(`appends: ${done} acknowledged, but the log head is ${head}`);
  latencies.sort();
  return { count: done, seconds, perSec: done / seconds, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
}

async function fullLogReads(store: SqliteEventStore, file: string, expected: number, minSeconds: number) {
  const raw = new Database(file, { readonly: true });
  try {
    const all = raw.prepare('SELECT * FROM events ORDER BY position');
    const storePass = async () => {
      let after: LogPosition | null = null;
      let count = 0;
      for (;;) {
        const page = await store.readAll({ after, maxCount: PAGE });
        if (page.length === 0) return count;
        count += page.length;
        after = page[page.length - 1].position;
      }
    };
    const rawPass = () => {
      let count = 0;
      for (const _row of all.iterate()) count++;
      return count;
    };
    const time = { store: 0, raw: 0 };
    let passes = 0;
    while (passes < MIN_READ_PASSES || time.store < minSeconds * 1000 || time.raw < minSeconds * 1000) {
      let t0 = performance.now();
      const fromStore = await storePass();
      time.store += performance.now() - t0;
      t0 = performance.now();
      const fromRaw = rawPass();
      time.raw += performance.now() - t0;
      if (fromStore !== expected || fromRaw !== expected)
        throw new Error(`reads: expected ${expected} events, readAll gave ${fromStore}, SELECT ${fromRaw}`);
      passes++;
    }
    const events = passes * expected;
    return {
      passes,
      store: { perSec: events / (time.store / 1000) },
      raw: { perSec: events / (time.raw / 1000) },
    };
  } finally {
    raw.close();
  }
}
