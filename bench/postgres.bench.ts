/**
 * The PostgreSQL event store's appends per second, against raw single-row INSERT transactions on
 * the same server in the same run.
 *
 * Setup: a database made for the run on `POSTGRES_BENCH_URL` (default: the machine's server,
 * `postgres://postgres@127.0.0.1:5432/postgres`), dropped after; the server's own settings
 * (`synchronous_commit` on: every commit waits for its WAL flush).
 *
 * Measures, {@link CLIENTS} concurrent writers each time, {@link SECONDS} seconds (a third with --quick):
 * - raw: `BEGIN; INSERT INTO raw (data) VALUES ($1::jsonb); COMMIT` on a pool of {@link CLIENTS} connections;
 * - appends of one event each, every writer on a stream of its own (expected revision checked);
 * - commands on one hot stream through `handleCommand` (the service's path: one decision at a time,
 *   waiting commands batched into one append).
 * Aim: appends/s ≥ the raw rate (the issue's: group commit should put the ratio above 1).
 */
import { PostgresEventStore } from '@deals/adapters';
import { appendToStream, Decider, handleCommand, OPERATOR } from '@deals/kernel';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'pg';
import { BenchOptions, BenchRow, row } from './support/bench-row';

const CLIENTS = 50;
const SECONDS = 6;
const ADMIN = process.env.POSTGRES_BENCH_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const counter: Decider<number, { type: 'Count'; data: Record<string, never> }, { type: 'Counted'; data: { n: number } }> = {
  initialState: () => 0,
  decide: (_command, n) => [{ type: 'Counted', data: { n: n + 1 } }],
  evolve: (n) => n + 1,
};

/** Runs `work` on `clients` loops for `ms`; returns operations per second. */
async function rate(clients: number, ms: number, work: (client: number) => Promise<void>): Promise<number> {
  const until = performance.now() + ms;
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (performance.now() < until) {
        await work(c);
        done++;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

export async function postgresBench(options: BenchOptions): Promise<BenchRow[]> {
  const name = `deals_bench_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const admin = new Client({ connectionString: ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN);
  url.pathname = `/${name}`;
  const ms = (options.quick ? SECONDS / 3 : SECONDS) * 1000;
  try {
    const pool = new Pool({ connectionString: url.toString(), max: CLIENTS });
    await pool.query('CREATE TABLE raw (id bigserial PRIMARY KEY, data jsonb NOT NULL)');
    const payload = JSON.stringify({ dealId: 'bench', quantity: 1, at: new Date().toISOString() });
    const raw = await rate(CLIENTS, ms, async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO raw (data) VALUES ($1::jsonb)', [payload]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    });
    await pool.end();

    const store = new PostgresEventStore(url.toString());
    await store.head();
    const revisions = new Array<number>(CLIENTS).fill(-1);
    const event = () => ({
      id: randomUUID(),
      type: 'Noted',
      data: JSON.parse(payload),
      metadata: { occurredAt: new Date().toISOString() },
    });
    const distinct = await rate(CLIENTS, ms, async (c) => {
      const r = revisions[c];
      revisions[c] = (await appendToStream(store, `bench-${c}`, [event()], r < 0 ? 'no_stream' : r)).nextExpectedRevision;
    });
    const context = { now: new Date(), metadata: OPERATOR };
    const hot = await rate(CLIENTS, ms, async () => {
      await handleCommand(store, 'bench-hot', counter, { type: 'Count', data: {} }, context);
    });
    await store.close();
    const limitName = `raw single-row INSERT transactions, ${CLIENTS} connections`;
    const notes = [
      `PostgreSQL on ${url.host}, a database made for the run; ${ms / 1000} s per figure, ${CLIENTS} writers; raw ${raw.toFixed(0)} tx/s; ` +
        `appends: one event each, one writer at a time across the database (an advisory lock held to the commit), each append its own transaction`,
    ];
    return [
      row('PostgreSQL appends/s, 50 writers on their own streams', distinct, 'appends/s', limitName, raw, {
        limitUnit: 'tx/s',
        aim: { min: 1 },
        notes,
      }),
      row('PostgreSQL commands/s, one hot stream (handleCommand)', hot, 'commands/s', limitName, raw, { limitUnit: 'tx/s' }),
    ];
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
