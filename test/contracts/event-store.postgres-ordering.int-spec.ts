import { PostgresEventStore } from '@deals/adapters/event-store/postgres/postgres-event-store.adapter';
import { IDLE_IN_TRANSACTION_MS, servicePool } from '@deals/adapters/postgres-pool';
import { appendHolding, appendToStream, countAfter, type RecordedEvent } from '@deals/kernel';
import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { eventually } from '../support/eventually';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

const event = (i: number) => ({ id: randomUUID(), type: 'Noted', data: { i }, metadata: { occurredAt: new Date(0).toISOString() } });
/** How long a wait for what the store does may take before it is taken as hung. */
const HUNG_MS = 60_000;
/** A poll so far apart that an event seen within {@link HUNG_MS} was read again for another reason. */
const NO_POLL_MS = 600_000;

/**
 * The store's reads of the log, watched: `next()` resolves once a read begun after it was asked
 * for has returned and its page has been handed on (what its subscriptions saw by then), and
 * `count` says how many have begun.
 */
function watchReads(store: PostgresEventStore): { next: () => Promise<void>; count: () => number } {
  const read = store.readPage.bind(store);
  let begun = 0;
  const waiting: Array<{ after: number; done: () => void }> = [];
  jest.spyOn(store, 'readPage').mockImplementation(async (...args) => {
    const n = ++begun;
    try {
      return await read(...args);
    } finally {
      // Once the page has been handed on (after the turn that returns it).
      for (const w of waiting.filter((w) => n > w.after)) {
        waiting.splice(waiting.indexOf(w), 1);
        setImmediate(w.done);
      }
    }
  });
  return { next: () => new Promise<void>((done) => waiting.push({ after: begun, done })), count: () => begun };
}

/** The notices of new events the store has heard, and a wait for the next `n` of them. */
function watchNotices(store: PostgresEventStore): { heard: (n?: number) => Promise<void> } {
  const spied = store as unknown as { wakeAll: () => void };
  const wakeAll = spied.wakeAll.bind(store);
  let count = 0;
  const waiting: Array<{ until: number; done: () => void }> = [];
  jest.spyOn(spied, 'wakeAll').mockImplementation(() => {
    count++;
    wakeAll();
    for (const w of waiting.filter((w) => count >= w.until)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.done();
    }
  });
  return { heard: (n = 1) => new Promise<void>((done) => waiting.push({ until: count + n, done })) };
}

/** Resolves once a session of the database waits for a lock (an append waiting for a row another transaction holds). */
async function someoneWaitsForALock(url: string): Promise<void> {
  const admin = new Client({ connectionString: url });
  await admin.connect();
  try {
    const waiting = async () =>
      (
        await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )
      ).rows[0].n;
    expect(await eventually(waiting, (n) => n > 0, HUNG_MS, 10)).toBeGreaterThan(0);
  } finally {
    await admin.end();
  }
}

if (unavailable) {
  describe.skip(`PostgreSQL event log order under concurrent, late-committing appends — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('PostgreSQL event log order under concurrent, late-committing appends', () => {
    // Past the waits' own ceiling, so that a hung wait fails on what it waited for.
    jest.setTimeout(2 * HUNG_MS);
    let database: { url: string; drop: () => Promise<void> };
    beforeAll(async () => (database = await createTestDatabase('ordering')));
    afterAll(async () => database?.drop());

    it('never lets a subscriber skip an event whose transaction committed after later ones, nor see one twice or out of order, and lets appends go on meanwhile', async () => {
      const [a, b] = [new PostgresEventStore(database.url), new PostgresEventStore(database.url)];
      await a.head(); // the tables exist
      const reads = watchReads(a);
      const seen: RecordedEvent[] = [];
      const subscription = a.subscribe({ after: null, onEvents: async (events) => void seen.push(...events) });
      // An append held open on purpose, as a writer does it (its stream's row, then its rows), committing late.
      const held = new Client({ connectionString: database.url });
      held.on('error', () => undefined);
      await held.connect();
      await held.query('BEGIN');
      await held.query('INSERT INTO event_streams (stream_id, revision, tx) VALUES ($1, 2, pg_current_xact_id())', ['held']);
      for (let i = 0; i < 3; i++)
        await held.query(
          `INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES ('held', $1, $2::uuid, 'Held', '{}'::jsonb, '{"occurredAt":"1970-01-01T00:00:00.000Z"}'::jsonb)`,
          [i, randomUUID()],
        );
      // Meanwhile two connections append 400 events to many streams: none waits for it.
      await Promise.all(
        [a, b].flatMap((store, s) =>
          Array.from({ length: 8 }, async (_, k) => {
            for (let i = 0; i < 25; i++) await appendToStream(store, `busy-${s}-${k}`, [event(i)], i === 0 ? 'no_stream' : i - 1);
          }),
        ),
      );
      // They are committed, but a reader sees none of them before the transaction that began first has ended.
      expect(await countAfter(a, null)).toBe(400);
      await reads.next();
      expect(seen).toHaveLength(0);
      await held.query('COMMIT');
      await held.end();
      await eventually(
        async () => seen.length,
        (n) => n >= 403,
        HUNG_MS,
      );
      await subscription.close();
      const all = await a.readAll({ after: null, maxCount: 10_000 });
      expect(all).toHaveLength(403);
      expect(all.slice(0, 3).map((e) => e.streamId)).toEqual(['held', 'held', 'held']);
      expect(seen.map((e) => e.position)).toEqual(all.map((e) => e.position));
      expect(new Set(seen.map((e) => e.position)).size).toBe(403);
      expect(seen.map((e) => e.position)).toEqual([...seen.map((e) => e.position)].sort());
      await Promise.all([a.close(), b.close()]);
    });

    it("frees a stream held by a writer frozen mid-transaction within the service's bound: the server ends the idle transaction", async () => {
      const store = new PostgresEventStore(database.url);
      await appendToStream(store, 'frozen', [event(0)], 'no_stream');
      // A writer of the service (its pool's session settings) takes the stream's row, then stops
      // sending anything: as a process frozen (SIGSTOP) or cut off between two statements.
      const pool = servicePool(database.url, 1);
      const frozen = await pool.connect();
      const ended = new Promise<Error & { code?: string }>((resolve) => frozen.once('error', resolve));
      await frozen.query('BEGIN');
      await frozen.query(`SELECT 1 FROM event_streams WHERE stream_id = 'frozen' FOR UPDATE`);
      const began = Date.now();
      await appendToStream(store, 'frozen', [event(1)], 0);
      expect(Date.now() - began).toBeGreaterThan(IDLE_IN_TRANSACTION_MS - 1000);
      // The server ended the frozen writer's session for its idle transaction (not the append's
      // lock wait running out): it says so, the writer's next statement fails, and the pool drops it.
      expect((await ended).code).toBe('25P03');
      await expect(frozen.query('SELECT 1')).rejects.toThrow();
      frozen.release(true);
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      await pool.end();
      expect((await store.readStream('frozen')).map((e) => e.revision)).toEqual([0, 1]);
      await store.close();
    });

    it("writes a stream's events after those of a transaction that began later but wrote the stream first", async () => {
      const store = new PostgresEventStore(database.url);
      await appendToStream(store, 'raced', [event(0)], 'no_stream');
      // Another writer holds the stream's row...
      const other = new Client({ connectionString: database.url });
      await other.connect();
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM event_streams WHERE stream_id = 'raced' FOR UPDATE`);
      // ...while this store's append begins (its transaction id drawn) and waits for the row.
      // 'any': no revision check to refuse it, so only the order of transactions can put it right.
      const appended = appendToStream(store, 'raced', [event(1)], 'any');
      await someoneWaitsForALock(database.url);
      // A transaction begun after it writes the stream first (as the other writer, on its behalf).
      const later = new Client({ connectionString: database.url });
      await later.connect();
      const { rows } = await later.query<{ tx: string }>('SELECT pg_current_xact_id()::text AS tx');
      await later.end();
      await other.query(
        `INSERT INTO events (stream_id, revision, event_id, type, data, metadata, tx) VALUES ('raced', 1, $1::uuid, 'Noted', '{}'::jsonb, '{"occurredAt":"1970-01-01T00:00:00.000Z"}'::jsonb, $2::xid8)`,
        [randomUUID(), rows[0].tx],
      );
      await other.query(`UPDATE event_streams SET revision = 1, tx = $1::xid8 WHERE stream_id = 'raced'`, [rows[0].tx]);
      await other.query('COMMIT');
      await other.end();
      // The append is written after the later events, in a transaction begun after theirs.
      const result = await appended;
      expect(result.nextExpectedRevision).toBe(2);
      const refused = appendToStream(store, 'raced', [event(3)], 1);
      await expect(refused).rejects.toThrow(/revision/i);
      const stream = await store.readStream('raced');
      expect(stream.map((e) => e.revision)).toEqual([0, 1, 2]);
      expect(stream.map((e) => e.position)).toEqual([...stream.map((e) => e.position)].sort());
      expect(result.position).toBe(stream[2].position);
      expect((await store.readAll({ after: null, maxCount: 10_000 })).filter((e) => e.streamId === 'raced').map((e) => e.revision)).toEqual(
        [0, 1, 2],
      );
      await store.close();
    });

    it("holds a stream's writes from the moment a holding append decides until it is written: another process's append waits, then finds it moved", async () => {
      const [holder, other] = [new PostgresEventStore(database.url), new PostgresEventStore(database.url)];
      const [held, beside] = [`held-${randomUUID()}`, `beside-${randomUUID()}`];
      await appendToStream(holder, held, [event(0)], 'no_stream');
      let theirs!: Promise<unknown>;
      const results = await appendHolding(holder, held, async () => {
        const seen = await holder.readStream(held);
        // Another process's append at the revision this one decided on: it waits for the hold.
        theirs = appendToStream(other, held, [event(9)], 0).catch((error: unknown) => error);
        await someoneWaitsForALock(database.url);
        return [
          { streamId: held, events: [event(seen.length)], expected: 0 },
          { streamId: beside, events: [event(0)], expected: 'no_stream' },
        ];
      });
      expect(results.map((r) => r.nextExpectedRevision)).toEqual([1, 0]);
      expect(await theirs).toMatchObject({ name: 'WrongExpectedRevision', streamId: held, actual: 1 });
      expect((await holder.readStream(held)).map((e) => e.data)).toEqual([{ i: 0 }, { i: 1 }]);
      await Promise.all([holder.close(), other.close()]);
    });

    it('writes nothing of a holding append whose decision is empty or refused, and frees the stream', async () => {
      const store = new PostgresEventStore(database.url);
      const [held, fresh] = [`held-${randomUUID()}`, `fresh-${randomUUID()}`];
      await appendToStream(store, held, [event(0)], 'no_stream');
      expect(await appendHolding(store, held, async () => [])).toEqual([]);
      const refused = appendHolding(store, held, async () => [
        { streamId: fresh, events: [event(0)], expected: 'no_stream' },
        { streamId: held, events: [event(1)], expected: 5 },
      ]);
      await expect(refused).rejects.toMatchObject({ name: 'WrongExpectedRevision', streamId: held, actual: 0 });
      expect(await store.readStream(fresh)).toEqual([]);
      // Freed: a plain append goes through at once.
      expect((await appendToStream(store, held, [event(1)], 0)).nextExpectedRevision).toBe(1);
      await store.close();
    });

    it('commits the appends started in one turn of the loop together, the first one included', async () => {
      const groups: number[] = [];
      const store = new PostgresEventStore(database.url, {
        observer: { appended: () => undefined, committed: (appends) => groups.push(appends) },
      });
      await store.head(); // the tables exist
      // As a purchase's start: its appends leave from code that awaits nothing but settled promises.
      const later = Promise.resolve().then(() => appendToStream(store, `turn-${randomUUID()}`, [event(2)], 'no_stream'));
      await Promise.all([
        appendToStream(store, `turn-${randomUUID()}`, [event(0)], 'no_stream'),
        store.appendToStreams([{ streamId: `turn-${randomUUID()}`, events: [event(1)], expected: 'no_stream' }]),
        later,
      ]);
      expect(groups).toEqual([3]);
      await store.close();
    });

    it('tries again an append whose new stream another transaction created meanwhile, and writes the rest of its group at once', async () => {
      const store = new PostgresEventStore(database.url);
      await store.head();
      const other = new Client({ connectionString: database.url });
      await other.connect();
      await other.query('BEGIN');
      await other.query(`INSERT INTO event_streams (stream_id, revision, tx) VALUES ('contested', 0, pg_current_xact_id())`);
      await other.query(
        `INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES ('contested', 0, $1::uuid, 'Noted', '{}'::jsonb, '{"occurredAt":"1970-01-01T00:00:00.000Z"}'::jsonb)`,
        [randomUUID()],
      );
      const blocker = appendToStream(store, 'blocker', [event(0)], 'no_stream'); // a group of its own, written now
      await blocker;
      // One group: a new stream of its own, and the contested one (it waits for the other transaction's row).
      const mine = appendToStream(store, 'uncontested', [event(0)], 'no_stream');
      const contested = appendToStream(store, 'contested', [event(1)], 'any');
      const another = appendToStream(store, 'contested-too', [event(0)], 'no_stream');
      await someoneWaitsForALock(database.url);
      await other.query('COMMIT');
      await other.end();
      expect((await contested).nextExpectedRevision).toBe(1);
      expect((await mine).nextExpectedRevision).toBe(0);
      expect((await another).nextExpectedRevision).toBe(0);
      expect((await store.readStream('contested')).map((e) => e.revision)).toEqual([0, 1]);
      await store.close();
    });

    it('reads again soon when events wait behind a transaction that writes none, instead of waiting for a notice or the poll', async () => {
      // The poll ten minutes apart: an event seen within a minute was read again by the subscription itself.
      const store = new PostgresEventStore(database.url, { pollMs: NO_POLL_MS });
      const start = await store.head();
      const reads = watchReads(store);
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribe({ after: start, onEvents: async (events) => void seen.push(...events) });
      // Another transaction of this database holds a transaction id and writes no event (no notice when it ends).
      const other = new Client({ connectionString: database.url });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT pg_current_xact_id()');
        await appendToStream(store, 'behind-a-quiet-one', [event(0)], 'no_stream');
        // A read after the append finds it held back.
        await reads.next();
        expect(seen).toHaveLength(0);
        await other.query('COMMIT');
        await eventually(
          async () => seen.length,
          (n) => n > 0,
          HUNG_MS,
        );
        expect(seen.map((e) => e.streamId)).toEqual(['behind-a-quiet-one']);
      } finally {
        await other.end();
        await subscription.close();
        await store.close();
      }
    });

    it('reads again at once when a notice came while it was reading, instead of waiting for the poll', async () => {
      const store = new PostgresEventStore(database.url, { pollMs: NO_POLL_MS });
      const start = await store.head();
      const read = store.readPage.bind(store);
      let reads = 0;
      let readDone!: () => void;
      const firstRead = new Promise<void>((resolve) => (readDone = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // The first read's answer is held until the append's notice has come: the read began before the commit.
      jest.spyOn(store, 'readPage').mockImplementation(async (...args) => {
        const page = await read(...args);
        if (reads++ === 0) {
          readDone();
          await released;
        }
        return page;
      });
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribe({ after: start, onEvents: async (events) => void seen.push(...events) });
      try {
        await firstRead;
        const notices = watchNotices(store);
        const noticed = notices.heard();
        await appendToStream(store, 'noticed-mid-read', [event(0)], 'no_stream');
        await noticed;
        release();
        await eventually(
          async () => seen.length,
          (n) => n > 0,
          HUNG_MS,
        );
        expect(seen.map((e) => e.streamId)).toEqual(['noticed-mid-read']);
      } finally {
        await subscription.close();
        await store.close();
      }
    });

    it('waits the poll after a failed delivery, however many notices come meanwhile', async () => {
      const store = new PostgresEventStore(database.url, { pollMs: NO_POLL_MS });
      const start = await store.head();
      const reads = watchReads(store);
      const failures: unknown[] = [];
      const subscription = store.subscribe({
        after: start,
        onEvents: async () => {
          throw new Error('the consumer is down');
        },
        onError: (error) => void failures.push(error),
      });
      try {
        await store.listen();
        const notices = watchNotices(store);
        // The first append's notice wakes the subscription, whose delivery fails.
        await appendToStream(store, 'refused-delivery-0', [event(0)], 'no_stream');
        await eventually(
          async () => failures.length,
          (n) => n > 0,
          HUNG_MS,
        );
        const readsBefore = reads.count();
        for (let i = 1; i < 10; i++) {
          const heard = notices.heard();
          await appendToStream(store, `refused-delivery-${i}`, [event(0)], 'no_stream');
          await heard;
        }
        // A read woken by a notice would have begun within the turn that heard it.
        await new Promise((r) => setImmediate(r));
        expect(reads.count()).toBe(readsBefore);
        expect(failures).toHaveLength(1);
      } finally {
        await subscription.close();
        await store.close();
      }
    });

    it('takes over a log written before its order named transactions: the old positions kept, every new one after them', async () => {
      const older = await createTestDatabase('ordering_upgrade');
      const admin = new Client({ connectionString: older.url });
      await admin.connect();
      try {
        await admin.query(`
          CREATE TABLE event_streams (stream_id text PRIMARY KEY, revision integer NOT NULL);
          CREATE TABLE events (position bigserial PRIMARY KEY, stream_id text NOT NULL, revision integer NOT NULL, event_id uuid NOT NULL,
            type text NOT NULL, data jsonb NOT NULL, metadata jsonb NOT NULL, UNIQUE (stream_id, revision));
          INSERT INTO event_streams VALUES ('old', 1);`);
        for (let i = 0; i < 2; i++)
          await admin.query(
            `INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES ('old', $1, $2::uuid, 'Noted', '{}'::jsonb, '{"occurredAt":"1970-01-01T00:00:00.000Z"}'::jsonb)`,
            [i, randomUUID()],
          );
        const store = new PostgresEventStore(older.url);
        const before = await store.readAll({ after: null, maxCount: 10 });
        expect(before.map((e) => e.position)).toEqual(['00000000000000000001', '00000000000000000002']);
        const { position } = await appendToStream(store, 'old', [event(2)], 1);
        await appendToStream(store, 'new', [event(0)], 'no_stream');
        expect(position > before[1].position).toBe(true);
        const after = await store.readAll({ after: before[0].position, maxCount: 10 });
        expect(after.map((e) => [e.streamId, e.revision])).toEqual([
          ['old', 1],
          ['old', 2],
          ['new', 0],
        ]);
        expect((await store.readAll({ after: position, maxCount: 10 })).map((e) => e.streamId)).toEqual(['new']);
        expect(await store.head()).toBe(after[2].position);
        await store.close();
      } finally {
        await admin.end();
        await older.drop();
      }
    });
  });
}
