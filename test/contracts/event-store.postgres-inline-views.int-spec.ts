import { PostgresEventStore } from '@deals/adapters/event-store/postgres/postgres-event-store.adapter';
import { PostgresViewStore } from '@deals/adapters/view-store/postgres/postgres-view-store.adapter';
import type { Decider, DomainEvent, InlineDocument, NewEvent, ViewDocument } from '@deals/kernel';
import {
  appendToStream,
  defineProjection,
  handleCommand,
  inlineDocument,
  registerInlineProjections,
  RequestWrites,
  WrongExpectedRevision,
} from '@deals/kernel';
import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

const event = (i: number): NewEvent => ({
  id: randomUUID(),
  type: 'Noted',
  data: { i },
  metadata: { occurredAt: new Date(0).toISOString() },
});
/** A document folded from the appends' own events (its position to be stamped), over the stored one at `base` (none: a new one). */
const doc = (id: string, n: number, base: string | null = null): InlineDocument => ({
  doc: { _id: id, _pos: '', n } as ViewDocument,
  base,
});
const key = (collection: string, id: string) => `${collection} ${id}`;

/** The stores of one process of the database: a log that writes the views' documents with its appends. */
async function stores(
  url: string,
  collections: string[],
): Promise<{ log: PostgresEventStore; views: PostgresViewStore; close: () => Promise<void> }> {
  const log = new PostgresEventStore(url);
  const views = new PostgresViewStore(url);
  log.writeViewsInto(views);
  for (const collection of collections) await views.define(collection, []);
  return { log, views, close: async () => void (await Promise.all([log.close(), views.close()])) };
}

/** Stops a view store looking for generations switched by other processes (it looks every half second). */
const stopLooking = (views: PostgresViewStore) => clearInterval((views as unknown as { poller: NodeJS.Timeout }).poller);

if (unavailable) {
  describe.skip(`PostgreSQL event log writing views with its appends — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('PostgreSQL event log writing views with its appends', () => {
    let database: { url: string; drop: () => Promise<void> };
    beforeAll(async () => (database = await createTestDatabase('inline')));
    afterAll(async () => database?.drop());

    it('writes the documents in the appends’ statement, each stamped with the position of the last event appended', async () => {
      const { log, views, close } = await stores(database.url, ['inline_sales', 'inline_coupons']);
      try {
        expect(log.writesViews).toBe(true);
        const { results, written } = await log.appendWithViews(
          [
            { streamId: 'deal-1', events: [event(1), event(2)], expected: 'no_stream' },
            { streamId: 'purchase-1', events: [event(3)], expected: 'no_stream' },
          ],
          [
            { collection: 'inline_coupons', documents: [doc('c2', 2), doc('c1', 1)] },
            { collection: 'inline_sales', documents: [doc('p1', 3)] },
          ],
        );
        expect(written).toEqual(new Set([key('inline_coupons', 'c1'), key('inline_coupons', 'c2'), key('inline_sales', 'p1')]));
        const last = results[1].position;
        expect(last > results[0].position).toBe(true);
        expect(await views.findById('inline_sales', 'p1')).toEqual({ _id: 'p1', _pos: last, n: 3 });
        expect(await views.findByIds('inline_coupons', ['c1', 'c2'])).toEqual([
          { _id: 'c1', _pos: last, n: 1 },
          { _id: 'c2', _pos: last, n: 2 },
        ]);
        // The fold of the same events changes nothing: its documents are no newer.
        await views.writer('inline_sales').commit([{ _id: 'p1', _pos: results[1].position, n: 99 }], last);
        expect(await views.findById('inline_sales', 'p1')).toEqual({ _id: 'p1', _pos: last, n: 3 });
      } finally {
        await close();
      }
    });

    it('gives each unit of a group its own position, and writes nothing of a refused unit', async () => {
      const { log, views, close } = await stores(database.url, ['inline_groups']);
      try {
        await appendToStream(log, 'taken', [event(0)], 'no_stream');
        // Three units started in one turn go as one group, one statement.
        const [a, refused, b] = await Promise.allSettled([
          log.appendWithViews(
            [{ streamId: 'unit-a', events: [event(1)], expected: 'no_stream' }],
            [{ collection: 'inline_groups', documents: [doc('a', 1)] }],
          ),
          log.appendWithViews(
            [{ streamId: 'taken', events: [event(2)], expected: 'no_stream' }],
            [{ collection: 'inline_groups', documents: [doc('refused', 2)] }],
          ),
          log.appendWithViews(
            [{ streamId: 'unit-b', events: [event(3), event(4)], expected: 'no_stream' }],
            [{ collection: 'inline_groups', documents: [doc('b', 3)] }],
          ),
        ]);
        expect(refused.status === 'rejected' && refused.reason).toBeInstanceOf(WrongExpectedRevision);
        if (a.status !== 'fulfilled' || b.status !== 'fulfilled') throw new Error('an accepted unit was refused');
        expect(await views.findById('inline_groups', 'a')).toEqual({ _id: 'a', _pos: a.value.results[0].position, n: 1 });
        expect(await views.findById('inline_groups', 'b')).toEqual({ _id: 'b', _pos: b.value.results[0].position, n: 3 });
        expect(await views.findById('inline_groups', 'refused')).toBeNull();
        expect(await log.readStream('taken')).toHaveLength(1);
      } finally {
        await close();
      }
    });

    it('writes a document only over the stored one it was folded from, and a new one only where none is stored', async () => {
      const { log, views, close } = await stores(database.url, ['inline_based']);
      try {
        const at = (n: number) => '0'.repeat(19) + String(n);
        await views.writer('inline_based').commit(
          [
            { _id: 'folded-from', _pos: at(1), n: 1 },
            { _id: 'changed-since', _pos: at(2), n: 2 },
            { _id: 'already-there', _pos: at(1), n: 3 },
          ],
          at(2),
        );
        const { results, written } = await log.appendWithViews(
          [{ streamId: 'based', events: [event(1)], expected: 'no_stream' }],
          [
            {
              collection: 'inline_based',
              documents: [doc('folded-from', 10, at(1)), doc('changed-since', 20, at(1)), doc('already-there', 30), doc('new', 40)],
            },
          ],
        );
        expect(written).toEqual(new Set([key('inline_based', 'folded-from'), key('inline_based', 'new')]));
        const position = results[0].position;
        expect(await views.findByIds('inline_based', ['already-there', 'changed-since', 'folded-from', 'new'])).toEqual([
          { _id: 'already-there', _pos: at(1), n: 3 },
          { _id: 'changed-since', _pos: at(2), n: 2 },
          { _id: 'folded-from', _pos: position, n: 10 },
          { _id: 'new', _pos: position, n: 40 },
        ]);
      } finally {
        await close();
      }
    });

    it('appends without the documents into a generation another process has replaced, or whose table it has dropped, and says so', async () => {
      const here = await stores(database.url, ['inline_rebuilt']);
      const other = new PostgresViewStore(database.url);
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      try {
        await other.define('inline_rebuilt', []);
        stopLooking(here.views);
        const replaced = (await here.views.status()).find((s) => s.collection === 'inline_rebuilt')!.generation;
        await (await other.beginRebuild('inline_rebuilt')).activate();
        const first = await here.log.appendWithViews(
          [{ streamId: 'rebuilt-1', events: [event(1)], expected: 'no_stream' }],
          [{ collection: 'inline_rebuilt', documents: [doc('p1', 1)] }],
        );
        expect(first.written.size).toBe(0);
        expect(await here.log.readStream('rebuilt-1')).toHaveLength(1);
        expect(await other.findById('inline_rebuilt', 'p1')).toBeNull();
        // The replaced generation's table gone before this process looked again.
        await admin.query(`DROP TABLE "view__inline_rebuilt__${replaced}"`);
        const second = await here.log.appendWithViews(
          [{ streamId: 'rebuilt-2', events: [event(2)], expected: 'no_stream' }],
          [{ collection: 'inline_rebuilt', documents: [doc('p2', 2)] }],
        );
        expect(second.written.size).toBe(0);
        expect(await here.log.readStream('rebuilt-2')).toHaveLength(1);
      } finally {
        await admin.end();
        await Promise.all([here.close(), other.close()]);
      }
    });

    it('appends without the documents when the server refuses one, and says so', async () => {
      const { log, views, close } = await stores(database.url, ['inline_refused']);
      try {
        // PostgreSQL's jsonb takes no NUL character.
        const refused = doc('p', 1);
        Object.assign(refused.doc, { title: 'a\u0000b' });
        const { written } = await log.appendWithViews(
          [{ streamId: 'refused-doc', events: [event(1)], expected: 'no_stream' }],
          [{ collection: 'inline_refused', documents: [refused] }],
        );
        expect(written.size).toBe(0);
        expect(await log.readStream('refused-doc')).toHaveLength(1);
        expect(await views.findById('inline_refused', 'p')).toBeNull();
      } finally {
        await close();
      }
    });

    it('writes no documents where no view store was given', async () => {
      const log = new PostgresEventStore(database.url);
      try {
        expect(log.writesViews).toBe(false);
        const { written } = await log.appendWithViews(
          [{ streamId: 'plain', events: [event(1)], expected: 'no_stream' }],
          [{ collection: 'inline_sales', documents: [doc('plain', 1)] }],
        );
        expect(written.size).toBe(0);
        expect(await log.readStream('plain')).toHaveLength(1);
      } finally {
        await log.close();
      }
    });
  });
}

if (!unavailable)
  describe('PostgreSQL: an inline projection registered with the command engine', () => {
    let database: { url: string; drop: () => Promise<void> };
    beforeAll(async () => (database = await createTestDatabase('inline_engine')));
    afterAll(async () => database?.drop());

    /** A tally: its first command opens it, each adds to it. */
    const tally: Decider<{ open: boolean }, { type: 'Add'; data: { id: string; n: number } }, DomainEvent> = {
      initialState: () => ({ open: false }),
      decide: (command, state) => [{ type: state.open ? 'Added' : 'Opened', data: command.data }],
      evolve: () => ({ open: true }),
    };
    const totals = defineProjection<ViewDocument & { n: number }>({
      name: 'inline_tallies',
      handles: ['Opened', 'Added'],
      indexes: [],
      inline: { bornOf: ['Opened'] },
      documentIds: (event) => [(event.data as { id: string }).id],
      evolve: (view, event, id) => ({ _id: id, _pos: event.position, n: (view?.n ?? 0) + (event.data as { n: number }).n }),
    });
    const add = (id: string, n: number) => ({ type: 'Add' as const, data: { id, n } });

    it('writes each unit’s documents in its append, resting on what the request’s last unit wrote, so a reader finds them with the events', async () => {
      const { log, views, close } = await stores(database.url, ['inline_tallies']);
      try {
        registerInlineProjections(log, [totals]);
        const writes = new RequestWrites();
        const context = { now: new Date(0), metadata: { actor: 'test', writes } };
        await handleCommand(log, 'tally-a', tally, add('a', 2), context);
        expect([...writes.shown]).toEqual(['inline_tallies']);
        const second = await handleCommand(log, 'tally-a', tally, add('a', 3), context);
        expect(await views.findById('inline_tallies', 'a')).toEqual({ _id: 'a', _pos: second.position, n: 5 });
        expect(inlineDocument(writes, totals, 'a')).toEqual({ doc: { _id: 'a', _pos: second.position, n: 5 }, written: true });
        // Another writer changes it (the projection's own run, say): this process's next unit writes nothing over it.
        await views.writer('inline_tallies').commit([{ _id: 'a', _pos: '9'.repeat(20), n: 100 }], '9'.repeat(20));
        const shownBefore = new Set(writes.shown);
        writes.shown.clear();
        await handleCommand(log, 'tally-a', tally, add('a', 1), context);
        expect(writes.shown.size).toBe(0);
        expect(shownBefore.size).toBe(1);
        // Another request's unit rests on nothing it folded: nothing written.
        const other = new RequestWrites();
        await handleCommand(log, 'tally-a', tally, add('a', 1), { ...context, metadata: { actor: 'test', writes: other } });
        expect(inlineDocument(other, totals, 'a')).toBeNull();
        expect(await views.findById('inline_tallies', 'a')).toEqual({ _id: 'a', _pos: '9'.repeat(20), n: 100 });
      } finally {
        await close();
      }
    });
  });
