import { PostgresEventStore } from '@deals/adapters/event-store/postgres/postgres-event-store.adapter';
import { PostgresViewStore } from '@deals/adapters/view-store/postgres/postgres-view-store.adapter';
import type { Decider, DomainEvent, InlineDocument, NewEvent, Projection, ViewDocument } from '@deals/kernel';
import {
  applyEvents,
  defineProjection,
  foldBatch,
  handleCommand,
  inlineDocument,
  registerInlineProjections,
  RequestWrites,
} from '@deals/kernel';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

/*
 * Inline projections on PostgreSQL against other writers of the same documents: each case ends with
 * the projection's own run (the worker's fold over the whole log) and compares the stored documents
 * with a fold of every event from nothing, which is what a reader must eventually see.
 */

const unavailable = postgresUnavailableSync();

type Tally = ViewDocument & { n: number };

/** Each command adds `n` to document `id`; `open` begins it. The stream carries no state. */
const adder: Decider<null, { type: 'Add'; data: { id: string; n: number; open?: boolean } }, DomainEvent> = {
  initialState: () => null,
  decide: (command) => [{ type: command.data.open ? 'Opened' : 'Added', data: { id: command.data.id, n: command.data.n } }],
  evolve: () => null,
};
const add = (id: string, n: number, open = false) => ({ type: 'Add' as const, data: { id, n, open } });

const tallies = (name: string) =>
  defineProjection<Tally>({
    name,
    handles: ['Opened', 'Added'],
    indexes: [],
    inline: { bornOf: ['Opened'] },
    documentIds: (event) => [(event.data as { id: string }).id],
    evolve: (view, event, id) => ({ _id: id, _pos: event.position, n: (view?.n ?? 0) + (event.data as { n: number }).n }),
  });

/** A request's context: its units fold onto what its earlier units folded (`RequestWrites.folded`). */
const request = () => ({ now: new Date(0), metadata: { actor: 'test', writes: new RequestWrites() } });

async function process_(url: string, projection: Projection<Tally>, inline = true) {
  const log = new PostgresEventStore(url);
  const views = new PostgresViewStore(url);
  log.writeViewsInto(views);
  await views.define(projection.name, []);
  if (inline) registerInlineProjections(log, [projection]);
  return { log, views, close: async () => void (await Promise.all([log.close(), views.close()])) };
}

/** The projection's own run over the whole log (as the worker folds it), then the stored document and the one every event makes. */
async function afterTheWorker(log: PostgresEventStore, views: PostgresViewStore, projection: Projection<Tally>, id: string) {
  const events = await log.readAll({ after: null, maxCount: 10_000 });
  const writer = views.writer(projection.name);
  await writer.commit(await foldBatch(projection, writer, events), events[events.length - 1].position);
  const stored = (await views.findById(projection.name, id)) as Tally | null;
  const truth = applyEvents(projection, new Map(), events).find((doc) => doc._id === id)!;
  return { stored: stored?.n, truth: truth.n };
}

if (unavailable) {
  describe.skip(`inline projections against other writers on PostgreSQL — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('inline projections against other writers on PostgreSQL', () => {
    let database: { url: string; drop: () => Promise<void> };
    beforeAll(async () => (database = await createTestDatabase('inline_writers')));
    afterAll(async () => database?.drop());

    it('leaves to the run a document another request changes, though this process wrote it last: no change is lost', async () => {
      const projection = tallies('inline_other_requests');
      const a = await process_(database.url, projection);
      const b = await process_(database.url, projection);
      try {
        await handleCommand(a.log, 'f1-a', adder, add('d1', 1, true), request());
        // Another replica changes the document (its fold is left to the worker, which is behind).
        await handleCommand(b.log, 'f1-b', adder, add('d1', 10), request());
        // A later request here changes it again: it folded nothing of it, so writes nothing of it.
        const later = request();
        await handleCommand(a.log, 'f1-a', adder, add('d1', 100), later);
        expect(inlineDocument(later.metadata.writes, projection, 'd1')).toBeNull();
        expect(await afterTheWorker(a.log, a.views, projection, 'd1')).toEqual({ stored: 111, truth: 111 });
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('writes a document two units of one group statement carry with the first only, and tells the second it was not written', async () => {
      const projection = tallies('review_f3');
      const { log, views, close } = await process_(database.url, projection, false);
      try {
        const opened = await log.appendWithViews(
          [{ streamId: 'f3-0', events: [event('Opened', 'd3', 1)], expected: 'no_stream' }],
          [{ collection: projection.name, documents: [pending('d3', 1, null)] }],
        );
        const base = opened.results[0].position;
        // Two units begun in one turn (one group, one statement), each folded onto the stored document.
        const [x, y] = await Promise.all([
          log.appendWithViews(
            [{ streamId: 'f3-x', events: [event('Added', 'd3', 10)], expected: 'no_stream' }],
            [{ collection: projection.name, documents: [pending('d3', 11, base)] }],
          ),
          log.appendWithViews(
            [{ streamId: 'f3-y', events: [event('Added', 'd3', 100)], expected: 'no_stream' }],
            [{ collection: projection.name, documents: [pending('d3', 101, base)] }],
          ),
        ]);
        const said = { x: x.written.has(`${projection.name} d3`), y: y.written.has(`${projection.name} d3`) };
        const stored = (await views.findById(projection.name, 'd3')) as Tally;
        // One of two folds on the same base is stored; the other is told it was not, and the run folds its event.
        const worker = await afterTheWorker(log, views, projection, 'd3');
        expect({ said, stored: stored.n, afterWorker: worker.stored, truth: worker.truth }).toEqual({
          said: { x: true, y: false },
          stored: 11,
          afterWorker: 111,
          truth: 111,
        });
      } finally {
        await close();
      }
    });

    it('two lanes of other requests changing a document in one group write nothing of it: no change is lost', async () => {
      const projection = tallies('review_f3e');
      const { log, views, close } = await process_(database.url, projection);
      try {
        await handleCommand(log, 'f3e-0', adder, add('e', 1, true), request());
        // The two lanes' streams folded and cached (their next batches are decided without a read).
        await handleCommand(log, 'f3e-x', adder, add('other-x', 0, true), request());
        await handleCommand(log, 'f3e-y', adder, add('other-y', 0, true), request());
        await Promise.all([
          handleCommand(log, 'f3e-x', adder, add('e', 10), request()),
          handleCommand(log, 'f3e-y', adder, add('e', 100), request()),
        ]);
        const before = ((await views.findById(projection.name, 'e')) as Tally).n;
        const { stored, truth } = await afterTheWorker(log, views, projection, 'e');
        expect({ before, stored, truth }).toEqual({ before: 1, stored: 111, truth: 111 });
      } finally {
        await close();
      }
    });
  });
}

function event(type: string, id: string, n: number): NewEvent {
  return { id: randomUUID(), type, data: { id, n }, metadata: { occurredAt: new Date(0).toISOString() } };
}

function pending(id: string, n: number, base: string | null): InlineDocument {
  return { doc: { _id: id, _pos: '', n } as ViewDocument, base };
}
