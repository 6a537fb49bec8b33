import {
  DeadLetter,
  DeadLetterOptions,
  defineProjection,
  listDeadLetters,
  LogPosition,
  Projection,
  ProjectionDaemon,
  ProjectionRunner,
  rebuildProjections,
  ViewDocument,
  ViewStore,
  ViewWriter,
} from '@deals/kernel';
import { MemoryEventStore } from '../memory-event-store';

/** How long a wait may take before it counts as hung (a view reaches a few events in milliseconds). */
const HUNG_MS = 30_000;

interface Named extends ViewDocument {
  name: string;
  changes: number;
}

/** Whether the named view's fold is still defective: it throws on the name 'boom', and copies a NUL as it came. */
const defect = { on: true };

/** The view a dead letter is made of: a fold with a defect that can be fixed. */
const named = defineProjection<Named>({
  name: 'named',
  handles: ['Named'],
  indexes: [],
  documentIds: (event) => [(event.data as { key: string }).key],
  evolve: (view, event, id) => {
    const name = (event.data as { name: string }).name;
    if (defect.on && name === 'boom') throw new Error('name: must not be the reserved word');
    return { _id: id, _pos: event.position, name: defect.on ? name : name.replace(/\0/g, ''), changes: (view?.changes ?? 0) + 1 };
  },
}) as Projection;

/** A view keeper as the service runs one: a runner a view (embedded) or a daemon for them all (on a server). */
interface Keeper {
  start(): Promise<void>;
  stop(): Promise<void>;
  waitFor(position: LogPosition): Promise<boolean | null>;
}

type Keeping = (store: MemoryEventStore, views: ViewStore, logger: { log(): void; error(): void }, options: DeadLetterOptions) => Keeper;

const KEEPERS: Record<string, Keeping> = {
  'a runner': (store, views, logger, options) => {
    const runner = new ProjectionRunner(store, views, named, logger, options);
    return { start: () => runner.start(), stop: () => runner.stop(), waitFor: (p) => runner.waitFor(p, HUNG_MS) };
  },
  'the daemon': (store, views, logger, options) => {
    const daemon = new ProjectionDaemon(store, views, [named], logger, options);
    return { start: () => daemon.start(), stop: () => daemon.stop(), waitFor: (p) => daemon.waitFor(named.name, p, HUNG_MS) };
  },
};

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + HUNG_MS; !(await check());) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A view keeper sets aside an event it cannot apply (a dead letter) and goes on; a store that is
 * down sets nothing aside; a rebuild records again the letters that still fail and drops the others.
 * `refusesNul`: the store refuses a document holding a NUL character (PostgreSQL's JSONB).
 */
export function deadLettersContract(
  backend: string,
  open: () => Promise<{ views: ViewStore; cleanup: () => Promise<void> }>,
  { refusesNul = false }: { refusesNul?: boolean } = {},
): void {
  describe.each(Object.keys(KEEPERS))(`dead letters (${backend}), kept by %s`, (keeperName) => {
    let views: ViewStore;
    let cleanup: () => Promise<void>;
    let store: MemoryEventStore;
    let keeper: Keeper | null;
    const told: DeadLetter[] = [];
    const logger = { log: () => undefined, error: jest.fn() };
    jest.setTimeout(2 * HUNG_MS);

    beforeEach(async () => {
      ({ views, cleanup } = await open());
      await views.define(named.name, []);
      store = new MemoryEventStore();
      store.pageSize = 50;
      defect.on = true;
      told.length = 0;
      logger.error.mockClear();
      keeper = null;
    });

    afterEach(async () => {
      await keeper?.stop();
      await cleanup();
    });

    const keep = async (options: DeadLetterOptions = {}) => {
      keeper = KEEPERS[keeperName](store, views, logger, { onDeadLetter: (letter) => told.push(letter), ...options });
      await keeper.start();
    };
    const name = (key: string, value: string) => store.elsewhere(`user-${key}`, { type: 'Named', data: { key, name: value } });

    const poisons: Array<[string, string]> = [['whose fold throws', 'boom']];
    if (refusesNul) poisons.push(['whose document the store refuses', 'bad \u0000 name']);

    it.each(poisons)(
      'sets aside an event %s, applies the later ones, and a rebuild applies it once the fold is fixed',
      async (_, poison) => {
        name('k1', 'first');
        const bad = name('k1', poison);
        await keep();
        // Once set aside: a later event of its document in the same batch would overwrite what the store refuses.
        await until(() => told.length > 0, 'the dead letter');
        const after = name('k1', 'after');
        name('k2', 'other');
        const head = (await store.head())!;
        // The waits of later events end: nothing holds the view back.
        expect(await keeper!.waitFor(head)).toBe(true);
        expect(await views.findById<Named>(named.name, 'k1')).toMatchObject({ name: 'after', changes: 2, _pos: after.position });
        expect(await views.findById<Named>(named.name, 'k2')).toMatchObject({ name: 'other' });
        const letters = await listDeadLetters(views, named.name);
        expect(letters).toEqual([
          expect.objectContaining({
            projection: 'named',
            position: bad.position,
            eventType: 'Named',
            streamId: 'user-k1',
            eventId: bad.id,
          }),
        ]);
        // Names and rules only: no value of the event.
        expect(JSON.stringify(letters)).not.toContain(poison);
        expect(told).toEqual(letters);
        expect(logger.error).toHaveBeenCalledWith(expect.stringContaining(`set aside the Named event at ${bad.position}`));
        // Later events of the same document still apply.
        name('k1', 'later');
        expect(await keeper!.waitFor((await store.head())!)).toBe(true);
        expect(await views.findById<Named>(named.name, 'k1')).toMatchObject({ name: 'later', changes: 3 });

        // A rebuild with the defect still there records the letter again rather than failing (pages
        // of one event: in a larger one the later event of its document overwrites what the store refuses).
        await keeper!.stop();
        keeper = null;
        expect((await rebuildProjections(store, views, [named], undefined, 1)).setAside).toBe(1);
        expect(await listDeadLetters(views, named.name)).toEqual([expect.objectContaining({ position: bad.position })]);
        defect.on = false;
        expect((await rebuildProjections(store, views, [named])).setAside).toBe(0);
        expect(await listDeadLetters(views, named.name)).toEqual([]);
        expect(await views.findById<Named>(named.name, 'k1')).toMatchObject({ name: 'later', changes: 4 });
      },
    );

    it.each([
      ['a deadlock', '40P01'],
      ['a statement timeout', '57014'],
    ])('sets no good event aside while its documents meet %s and letters go through', async (_, code) => {
      // Only the view's documents are refused (a row another transaction holds), as PostgreSQL answers.
      const contended = { on: true };
      const refuse = () => Promise.reject(Object.assign(new Error('the commit was cancelled'), { code }));
      const refused = (collection: string, documents: readonly unknown[]) =>
        contended.on && collection === named.name && documents.length > 0;
      const commitAll = views.commitAll.bind(views);
      jest
        .spyOn(views, 'commitAll')
        .mockImplementation((batches) => (batches.some((b) => refused(b.writer.collection, b.documents)) ? refuse() : commitAll(batches)));
      const writer = views.writer.bind(views);
      jest.spyOn(views, 'writer').mockImplementation((collection): ViewWriter => {
        const inner = writer(collection);
        return {
          collection: inner.collection,
          generation: inner.generation,
          getMany: (ids) => inner.getMany(ids),
          checkpoint: () => inner.checkpoint(),
          commit: (d, c) => (refused(inner.collection, d) ? refuse() : inner.commit(d, c)),
        };
      });
      name('k1', 'first');
      await keep({ isolateAfter: 1 });
      await until(() => told.length > 0 || logger.error.mock.calls.length >= 6, 'several failed attempts');
      expect(told).toEqual([]);
      contended.on = false;
      expect(await keeper!.waitFor((await store.head())!)).toBe(true);
      expect(await views.findById<Named>(named.name, 'k1')).toMatchObject({ name: 'first' });
      expect(told).toEqual([]);
      expect(await listDeadLetters(views, named.name)).toEqual([]);
    });

    it('sets nothing aside while the store refuses every commit, and catches up once it takes them', async () => {
      const down = { on: true };
      const refuse = () => Promise.reject(new Error('the store is down'));
      const commitAll = views.commitAll.bind(views);
      jest.spyOn(views, 'commitAll').mockImplementation((batches) => (down.on ? refuse() : commitAll(batches)));
      const writer = views.writer.bind(views);
      jest.spyOn(views, 'writer').mockImplementation((collection): ViewWriter => {
        const inner = writer(collection);
        return {
          collection: inner.collection,
          generation: inner.generation,
          getMany: (ids) => inner.getMany(ids),
          checkpoint: () => inner.checkpoint(),
          commit: (d, c) => (down.on ? refuse() : inner.commit(d, c)),
        };
      });
      name('k1', 'first');
      name('k2', 'second');
      // Applied one event at a time from the first failure: each event refused, and its letter too.
      await keep({ isolateAfter: 1 });
      await until(() => logger.error.mock.calls.length >= 6, 'several failed attempts');
      expect(told).toEqual([]);
      expect(await views.findById(named.name, 'k1')).toBeNull();
      down.on = false;
      expect(await keeper!.waitFor((await store.head())!)).toBe(true);
      expect(await views.findById<Named>(named.name, 'k2')).toMatchObject({ name: 'second' });
      expect(told).toEqual([]);
      expect(await listDeadLetters(views, named.name)).toEqual([]);
    });
  });
}
