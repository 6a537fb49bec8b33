import { PostgresEventStore } from '@deals/adapters/event-store/postgres/postgres-event-store.adapter';
import { IDLE_IN_TRANSACTION_MS, servicePool } from '@deals/adapters/postgres-pool';
import type { RecordedEvent } from '@deals/kernel';
import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

const event = (i: number) => ({ id: randomUUID(), type: 'Noted', data: { i }, metadata: { occurredAt: new Date(0).toISOString() } });

if (unavailable) {
  describe.skip(`PostgreSQL event log order under concurrent, late-committing appends — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('PostgreSQL event log order under concurrent, late-committing appends', () => {
    let database: { url: string; drop: () => Promise<void> };
    beforeAll(async () => (database = await createTestDatabase('ordering')));
    afterAll(async () => database?.drop());

    it('never lets a subscriber skip an event whose transaction committed after later ones, nor see one twice or out of order, and lets appends go on meanwhile', async () => {
      const [a, b] = [new PostgresEventStore(database.url), new PostgresEventStore(database.url)];
      await a.head(); // the tables exist
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
            for (let i = 0; i < 25; i++) await store.append(`busy-${s}-${k}`, [event(i)], i === 0 ? 'no_stream' : i - 1);
          }),
        ),
      );
      // They are committed, but a reader sees none of them before the transaction that began first has ended.
      expect(await a.countAfter(null)).toBe(400);
      await new Promise((r) => setTimeout(r, 300));
      expect(seen).toHaveLength(0);
      await held.query('COMMIT');
      await held.end();
      for (let i = 0; seen.length < 403 && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
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
      await store.append('frozen', [event(0)], 'no_stream');
      // A writer of the service (its pool's session settings) takes the stream's row, then stops
      // sending anything: as a process frozen (SIGSTOP) or cut off between two statements.
      const pool = servicePool(database.url, 1);
      const frozen = await pool.connect();
      await frozen.query('BEGIN');
      await frozen.query(`SELECT 1 FROM event_streams WHERE stream_id = 'frozen' FOR UPDATE`);
      const began = Date.now();
      await store.append('frozen', [event(1)], 0);
      const waited = Date.now() - began;
      expect(waited).toBeGreaterThan(IDLE_IN_TRANSACTION_MS - 1000);
      expect(waited).toBeLessThan(IDLE_IN_TRANSACTION_MS + 3000);
      // The frozen writer's transaction was ended for it: its next statement fails, and the pool drops it.
      await expect(frozen.query('SELECT 1')).rejects.toThrow();
      frozen.release(true);
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      await pool.end();
      expect((await store.readStream('frozen')).map((e) => e.revision)).toEqual([0, 1]);
      await store.close();
    }, 20_000);

    it("writes a stream's events after those of a transaction that began later but wrote the stream first", async () => {
      const store = new PostgresEventStore(database.url);
      await store.append('raced', [event(0)], 'no_stream');
      // Another writer holds the stream's row...
      const other = new Client({ connectionString: database.url });
      await other.connect();
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM event_streams WHERE stream_id = 'raced' FOR UPDATE`);
      // ...while this store's append begins (its transaction id drawn) and waits for the row.
      // 'any': no revision check to refuse it, so only the order of transactions can put it right.
      const appended = store.append('raced', [event(1)], 'any');
      await new Promise((r) => setTimeout(r, 300));
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
      const refused = store.append('raced', [event(3)], 1);
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
      const blocker = store.append('blocker', [event(0)], 'no_stream'); // a group of its own, written now
      await blocker;
      // One group: a new stream of its own, and the contested one (it waits for the other transaction's row).
      const mine = store.append('uncontested', [event(0)], 'no_stream');
      const contested = store.append('contested', [event(1)], 'any');
      const another = store.append('contested-too', [event(0)], 'no_stream');
      await new Promise((r) => setTimeout(r, 300));
      await other.query('COMMIT');
      await other.end();
      expect((await contested).nextExpectedRevision).toBe(1);
      expect((await mine).nextExpectedRevision).toBe(0);
      expect((await another).nextExpectedRevision).toBe(0);
      expect((await store.readStream('contested')).map((e) => e.revision)).toEqual([0, 1]);
      await store.close();
    });

    it('reads again soon when events wait behind a transaction that writes none, instead of waiting for a notice or the poll', async () => {
      // The poll a minute apart: an event seen within seconds was read again by the subscription itself.
      const store = new PostgresEventStore(database.url, { pollMs: 60_000 });
      const start = await store.head();
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribe({ after: start, onEvents: async (events) => void seen.push(...events) });
      // Another transaction of this database holds a transaction id and writes no event (no notice when it ends).
      const other = new Client({ connectionString: database.url });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT pg_current_xact_id()');
        await store.append('behind-a-quiet-one', [event(0)], 'no_stream');
        await new Promise((r) => setTimeout(r, 200));
        expect(seen).toHaveLength(0);
        const ended = Date.now();
        await other.query('COMMIT');
        while (seen.length === 0 && Date.now() - ended < 10_000) await new Promise((r) => setTimeout(r, 10));
        expect(seen.map((e) => e.streamId)).toEqual(['behind-a-quiet-one']);
        expect(Date.now() - ended).toBeLessThan(10_000);
      } finally {
        await other.end();
        await subscription.close();
        await store.close();
      }
    });

    it('reads again at once when a notice came while it was reading, instead of waiting for the poll', async () => {
      const store = new PostgresEventStore(database.url, { pollMs: 60_000 });
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
        await store.append('noticed-mid-read', [event(0)], 'no_stream');
        await new Promise((r) => setTimeout(r, 300));
        release();
        const ended = Date.now();
        while (seen.length === 0 && Date.now() - ended < 10_000) await new Promise((r) => setTimeout(r, 10));
        expect(seen.map((e) => e.streamId)).toEqual(['noticed-mid-read']);
      } finally {
        await subscription.close();
        await store.close();
      }
    });

    it('waits the poll after a failed delivery, however many notices come meanwhile', async () => {
      const store = new PostgresEventStore(database.url, { pollMs: 60_000 });
      const start = await store.head();
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
        for (let i = 0; i < 10; i++) {
          await store.append(`refused-delivery-${i}`, [event(0)], 'no_stream');
          await new Promise((r) => setTimeout(r, 30));
        }
        await new Promise((r) => setTimeout(r, 200));
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
        const { position } = await store.append('old', [event(2)], 1);
        await store.append('new', [event(0)], 'no_stream');
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
