import { PostgresEventStore } from '@deals/adapters/event-store/postgres/postgres-event-store.adapter';
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

    it('never lets a subscriber skip an event whose transaction committed after later ones, nor see one twice or out of order', async () => {
      const [a, b] = [new PostgresEventStore(database.url), new PostgresEventStore(database.url)];
      await a.head(); // the tables exist
      const seen: RecordedEvent[] = [];
      const subscription = a.subscribe({ after: null, onEvents: async (events) => void seen.push(...events) });
      // An append held open on purpose, as a writer does it (the lock, then its rows), committing late.
      const held = new Client({ connectionString: database.url });
      held.on('error', () => undefined);
      await held.connect();
      await held.query('BEGIN');
      await held.query('SELECT pg_advisory_xact_lock(7216002)');
      await held.query('INSERT INTO event_streams (stream_id, revision) VALUES ($1, 2)', ['held']);
      for (let i = 0; i < 3; i++)
        await held.query(
          `INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES ('held', $1, $2::uuid, 'Held', '{}'::jsonb, '{"occurredAt":"1970-01-01T00:00:00.000Z"}'::jsonb)`,
          [i, randomUUID()],
        );
      // Meanwhile two connections start appending 400 events to many streams: they wait for it.
      const busy = Promise.all(
        [a, b].flatMap((store, s) =>
          Array.from({ length: 8 }, async (_, k) => {
            for (let i = 0; i < 25; i++) await store.append(`busy-${s}-${k}`, [event(i)], i === 0 ? 'no_stream' : i - 1);
          }),
        ),
      );
      await new Promise((r) => setTimeout(r, 500));
      expect(seen).toHaveLength(0);
      await held.query('COMMIT');
      await held.end();
      await busy;
      for (let i = 0; seen.length < 403 && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
      await subscription.close();
      const all = await a.readAll({ after: null, maxCount: 10_000 });
      expect(all).toHaveLength(403);
      expect(seen.map((e) => e.position)).toEqual(all.map((e) => e.position));
      expect(new Set(seen.map((e) => e.position)).size).toBe(403);
      expect(seen.map((e) => e.position)).toEqual([...seen.map((e) => e.position)].sort());
      await Promise.all([a.close(), b.close()]);
    });
  });
}
