import { CheckpointListener, LogPosition, ViewDocument, ViewStore } from '@deals/kernel';
import { randomUUID } from 'node:crypto';

export interface ViewStoreUnderTest {
  views: ViewStore;
  /** Opens another instance on the same storage (a restart, or another process). */
  openAgain: () => Promise<ViewStore>;
  cleanup: () => Promise<void>;
}

interface Deal extends ViewDocument {
  partnerId: string;
  title: string;
  price: number;
  tags: string[];
  startAt: number;
  loc?: { type: 'Point'; coordinates: [number, number] };
}

const pos = (n: number) => String(n).padStart(20, '0');

const deal = (id: string, n: number, extra: Partial<Deal> = {}): Deal => ({
  _id: id,
  _pos: pos(n),
  partnerId: n % 2 ? 'odd' : 'even',
  title: `Deal number ${n}`,
  price: n * 100,
  tags: n % 3 ? ['food'] : ['spa', 'food'],
  startAt: 1_700_000_000_000 + n,
  ...extra,
});

/** What a store offers beyond every store's promises. */
export interface ViewStoreCapabilities {
  /** `commitAll` commits all its batches or none. */
  commitsAllAtOnce?: boolean;
  /** `onCheckpoints` tells of the checkpoints committed, in this instance and in others on the same storage. */
  tellsOfCheckpoints?: boolean;
  /** `writeAhead` stores documents for every process (true); false: it answers false and writes nothing. */
  writesAhead?: boolean;
}

/** How long a wait may take before it counts as hung. */
const HUNG_MS = 20_000;

/** Resolves with `check()`'s value once truthy; throws after `ms`. */
async function eventually<T>(check: () => T | undefined | false, what: string, ms = HUNG_MS): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * What every ViewStore adapter promises (ports/view-store.port.ts). Each test uses fresh collection
 * names, so the suite can share a server with other data.
 */
export function viewStoreContract(name: string, open: () => Promise<ViewStoreUnderTest>, capabilities: ViewStoreCapabilities = {}): void {
  describe(`ViewStore contract: ${name}`, () => {
    let subject: ViewStoreUnderTest;
    let views: ViewStore;
    let collection: string;

    beforeEach(async () => {
      subject = await open();
      views = subject.views;
      collection = `contract_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      await views.define(collection, [{ keys: { partnerId: 1, startAt: 1 } }, { keys: { loc: '2dsphere' } }]);
    });
    afterEach(async () => subject.cleanup());

    async function seed(count: number): Promise<Deal[]> {
      const docs = Array.from({ length: count }, (_, i) => deal(`d${i + 1}`, i + 1));
      await views.writer(collection).commit(docs, pos(count));
      return docs;
    }

    it('finds by id, by filter, sorts, skips, limits and counts in the MongoDB query language', async () => {
      const docs = await seed(20);
      expect(await views.findById<Deal>(collection, 'd3')).toEqual(docs[2]);
      expect(await views.findById(collection, 'nope')).toBeNull();
      const odd = await views.find<Deal>(
        collection,
        { partnerId: 'odd', price: { $gte: 500 } },
        { sort: { startAt: -1 }, skip: 1, limit: 3 },
      );
      expect(odd.map((d) => d._id)).toEqual(['d17', 'd15', 'd13']);
      expect(await views.count(collection, { partnerId: 'odd', price: { $gte: 500 } })).toBe(8);
      expect(await views.count(collection, { tags: 'spa' })).toBe(6);
      expect((await views.find<Deal>(collection, { _id: { $in: ['d2', 'd4', 'zz'] } }, { sort: { _id: 1 } })).map((d) => d._id)).toEqual([
        'd2',
        'd4',
      ]);
      expect(await views.findByIds<Deal>(collection, ['d4', 'zz', 'd2'])).toEqual([docs[3], docs[1]]);
      expect(await views.findByIds(collection, [])).toEqual([]);
      expect((await views.findOne<Deal>(collection, { title: { $regex: 'number 7$', $options: 'i' } }))?._id).toBe('d7');
      expect(await views.count(collection, {})).toBe(20);
    });

    it('never hands out the stored object itself', async () => {
      await seed(2);
      const found = await views.findById<Deal>(collection, 'd1');
      try {
        found!.tags.push('mutated');
        found!.title = 'mutated';
      } catch {
        // frozen is as good as copied
      }
      expect(await views.findById<Deal>(collection, 'd1')).toEqual(deal('d1', 1));
    });

    it('keeps a document as it is when a write carries an older or equal position', async () => {
      await seed(3);
      const writer = views.writer(collection);
      await writer.commit([{ ...deal('d2', 2), title: 'replayed', _pos: pos(2) }], pos(3));
      await writer.commit([{ ...deal('d2', 2), title: 'older', _pos: pos(1) }], pos(3));
      expect((await views.findById<Deal>(collection, 'd2'))?.title).toBe('Deal number 2');
      await writer.commit([{ ...deal('d2', 2), title: 'newer', _pos: pos(9) }], pos(9));
      expect((await views.findById<Deal>(collection, 'd2'))?.title).toBe('newer');
      const many = await writer.getMany<Deal>(['d1', 'd2', 'absent']);
      expect([...many.keys()].sort()).toEqual(['d1', 'd2']);
      expect(many.get('d2')?._pos).toBe(pos(9));
    });

    it('stores null and empty-array fields as they are, in a new document and in one replacing another', async () => {
      const writer = views.writer(collection);
      const plain = { partnerId: 'p', revokedAt: null, tags: [], nested: { at: null, list: [] } };
      await writer.commit([{ _id: 'n1', _pos: pos(1), ...plain }], pos(1));
      await writer.commit([{ _id: 'n2', _pos: pos(1), partnerId: 'p', revokedAt: 'soon', tags: ['x'] }], pos(1));
      await writer.commit([{ _id: 'n2', _pos: pos(2), ...plain }], pos(2));
      for (const id of ['n1', 'n2'])
        expect(await views.findById(collection, id)).toEqual({ _id: id, _pos: pos(id === 'n1' ? 1 : 2), ...plain });
      expect((await views.find(collection, { revokedAt: null }, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(['n1', 'n2']);
    });

    it("stores any JSON a partner's data holds (keys with '.', '$' or '%', arrays in arrays), read back as written and found by its plain fields", async () => {
      const writer = views.writer(collection);
      const data = { 'a.b': 1, $x: { 'y.z': [[1, 2], [], [[3]]], '%a': ['%2E'] }, list: [{ '%a': [4] }], 'tier%': 'gold' };
      const doc = { _id: 'j1', _pos: pos(1), partnerId: 'p', startAt: 'x', profile: { partnerData: data } };
      await writer.commit([doc], pos(1));
      expect(await views.findById(collection, 'j1')).toEqual(doc);
      const newer = { ...doc, _pos: pos(2), profile: { partnerData: { ...data, 'a.b': 2 } } };
      expect(await views.writeAhead([{ collection, documents: [newer] }])).toBe(Boolean(capabilities.writesAhead));
      if (!capabilities.writesAhead) await writer.commit([newer], pos(2));
      expect(await views.find(collection, { partnerId: 'p' }, { sort: { startAt: 1 } })).toEqual([newer]);
      expect(await writer.getMany(['j1'])).toEqual(new Map([['j1', newer]]));
    });

    it('remembers its checkpoint, across a restart', async () => {
      expect(await views.writer(collection).checkpoint()).toBeNull();
      await seed(4);
      expect(await views.writer(collection).checkpoint()).toBe(pos(4));
      await views.close();
      const again = await subject.openAgain();
      try {
        await again.define(collection, [{ keys: { partnerId: 1, startAt: 1 } }]);
        expect(await again.writer(collection).checkpoint()).toBe(pos(4));
        expect(await again.count(collection, {})).toBe(4);
        expect(await again.findById<Deal>(collection, 'd4')).toEqual(deal('d4', 4));
      } finally {
        await again.close();
      }
    });

    it('answers $geoWithin $centerSphere in radians of miles/3963.2, longitude first', async () => {
      // Points around Manhattan (40.7580 N, 73.9855 W): Brooklyn ~7 mi, Newark ~10 mi, Philadelphia ~80 mi.
      const docs = [
        deal('times-square', 1, { loc: { type: 'Point', coordinates: [-73.9855, 40.758] } }),
        deal('brooklyn', 2, { loc: { type: 'Point', coordinates: [-73.9442, 40.6782] } }),
        deal('newark', 3, { loc: { type: 'Point', coordinates: [-74.1724, 40.7357] } }),
        deal('philadelphia', 4, { loc: { type: 'Point', coordinates: [-75.1652, 39.9526] } }),
        deal('nowhere', 5),
      ];
      await views.writer(collection).commit(docs, pos(5));
      const within = (miles: number) =>
        views
          .find<Deal>(collection, { loc: { $geoWithin: { $centerSphere: [[-73.9855, 40.758], miles / 3963.2] } } }, { sort: { _id: 1 } })
          .then((found) => found.map((d) => d._id));
      expect(await within(1)).toEqual(['times-square']);
      expect(await within(8)).toEqual(['brooklyn', 'times-square']);
      expect(await within(12)).toEqual(['brooklyn', 'newark', 'times-square']);
      expect(await within(100)).toEqual(['brooklyn', 'newark', 'philadelphia', 'times-square']);
      expect(await views.count(collection, { loc: { $geoWithin: { $centerSphere: [[-73.9855, 40.758], 12 / 3963.2] } } })).toBe(3);
    });

    it('rebuilds into a fresh generation that readers see only once activated', async () => {
      await seed(3);
      const target = await views.beginRebuild(collection);
      expect(await target.checkpoint()).toBeNull();
      await target.commit([deal('r1', 1, { title: 'rebuilt' })], pos(7));
      expect(await views.count(collection, {})).toBe(3);
      expect(await views.findById(collection, 'r1')).toBeNull();
      await target.activate();
      expect(await views.count(collection, {})).toBe(1);
      expect((await views.findById<Deal>(collection, 'r1'))?.title).toBe('rebuilt');
      expect(await views.writer(collection).checkpoint()).toBe(pos(7));
      const status = await views.status();
      expect(status.find((s) => s.collection === collection)).toMatchObject({ checkpoint: pos(7), documents: 1 });
    });

    it('drops an abandoned rebuild without touching the live generation', async () => {
      await seed(2);
      const target = await views.beginRebuild(collection);
      await target.commit([deal('r1', 1)], pos(5));
      await target.abandon();
      expect(await views.count(collection, {})).toBe(2);
      expect(await views.writer(collection).checkpoint()).toBe(pos(2));
    });

    it('commits several collections at once, each document only over an older one, each checkpoint only forward', async () => {
      await seed(3);
      const other = `${collection}_b`;
      const quiet = `${collection}_c`;
      for (const c of [other, quiet]) await views.define(c, [{ keys: { partnerId: 1 } }]);
      await views.writer(other).commit([deal('b1', 5)], pos(8));
      await views.writer(quiet).commit([], pos(2));
      await views.commitAll([
        {
          writer: views.writer(collection),
          documents: [
            { ...deal('d2', 2), title: 'newer', _pos: pos(9) },
            { ...deal('d3', 3), title: 'older', _pos: pos(1) },
            deal('d4', 9),
          ],
          checkpoint: pos(9),
        },
        { writer: views.writer(other), documents: [{ ...deal('b1', 5), title: 'replayed' }, deal('b2', 7)], checkpoint: pos(7) },
        { writer: views.writer(quiet), documents: [], checkpoint: pos(9), store: false },
      ]);
      expect((await views.find<Deal>(collection, {}, { sort: { _id: 1 } })).map((d) => [d._id, d.title])).toEqual([
        ['d1', 'Deal number 1'],
        ['d2', 'newer'],
        ['d3', 'Deal number 3'],
        ['d4', 'Deal number 9'],
      ]);
      expect((await views.find<Deal>(other, {}, { sort: { _id: 1 } })).map((d) => [d._id, d.title])).toEqual([
        ['b1', 'Deal number 5'],
        ['b2', 'Deal number 7'],
      ]);
      expect(await views.writer(collection).checkpoint()).toBe(pos(9));
      expect(await views.writer(other).checkpoint()).toBe(pos(8));
      // A batch not to be stored leaves its checkpoint where it was.
      expect(await views.writer(quiet).checkpoint()).toBe(pos(2));
      await views.commitAll([{ writer: views.writer(quiet), documents: [], checkpoint: pos(10) }]);
      expect(await views.writer(quiet).checkpoint()).toBe(pos(10));
    });

    if (capabilities.writesAhead)
      it('writes documents ahead of the fold: readable by another instance at once, over older ones only, moving no checkpoint', async () => {
        await seed(2);
        const other = `${collection}_ahead`;
        await views.define(other, []);
        const again = await subject.openAgain();
        try {
          await again.define(collection, []);
          await again.define(other, []);
          const made = { ...deal('d9', 9), title: 'made by a request' };
          expect(
            await views.writeAhead([
              { collection, documents: [made, { ...deal('d1', 1), title: 'older', _pos: pos(0) }] },
              { collection: other, documents: [deal('o1', 7)] },
            ]),
          ).toBe(true);
          expect(await again.findById<Deal>(collection, 'd9')).toEqual(made);
          expect(await again.findById<Deal>(other, 'o1')).toEqual(deal('o1', 7));
          expect((await again.findById<Deal>(collection, 'd1'))?.title).toBe('Deal number 1');
          expect(await views.writer(collection).checkpoint()).toBe(pos(2));
          expect(await views.writer(other).checkpoint()).toBeNull();
          // The fold of the same events changes nothing; a later one moves it on.
          await views.writer(collection).commit([{ ...made, title: 'folded' }], pos(9));
          expect((await views.findById<Deal>(collection, 'd9'))?.title).toBe('made by a request');
          await views.writer(collection).commit([{ ...made, title: 'refunded', _pos: pos(11) }], pos(11));
          expect((await views.findById<Deal>(collection, 'd9'))?.title).toBe('refunded');
        } finally {
          await again.close();
        }
      });
    else
      it('writes nothing ahead of the fold, and says so', async () => {
        expect(await views.writeAhead([{ collection, documents: [deal('d9', 9)] }])).toBe(false);
        expect(await views.findById(collection, 'd9')).toBeNull();
      });

    if (capabilities.commitsAllAtOnce)
      it('commits all the batches of commitAll, or none', async () => {
        await seed(2);
        const other = `${collection}_b`;
        await views.define(other, [{ keys: { partnerId: 1 } }]);
        await views.writer(other).commit([deal('b1', 1)], pos(1));
        // The second batch's document cannot be stored (a NUL character): the first is not stored either.
        const changed: Deal = { ...deal('d1', 1), title: 'changed', _pos: pos(5) };
        const unstorable: Deal = { ...deal('b1', 1), title: 'bad \u0000', _pos: pos(5) };
        await expect(
          views.commitAll([
            { writer: views.writer(collection), documents: [changed], checkpoint: pos(5) },
            { writer: views.writer(other), documents: [unstorable], checkpoint: pos(5) },
          ]),
        ).rejects.toThrow();
        expect((await views.findById<Deal>(collection, 'd1'))?.title).toBe('Deal number 1');
        expect(await views.writer(collection).checkpoint()).toBe(pos(2));
        expect(await views.writer(other).checkpoint()).toBe(pos(1));
      });

    if (capabilities.tellsOfCheckpoints)
      it('tells this and another instance of every checkpoint committed, stored or not, for the generation each reads', async () => {
        const other = await subject.openAgain();
        const heard = (store: ViewStore) => {
          const told = { reached: [] as Array<[string, LogPosition]>, resyncs: 0 };
          const listener: CheckpointListener = {
            reached: (c, p) => void told.reached.push([c, p]),
            resync: () => void told.resyncs++,
          };
          return { told, stop: store.onCheckpoints(listener)! };
        };
        try {
          const second = `${collection}_b`;
          await views.define(second, []);
          for (const c of [collection, second]) await other.define(c, []);
          const here = heard(views);
          const there = heard(other);
          expect(here.stop).toEqual(expect.any(Function));
          // Listening begins with a resync: what was committed before is in no notice.
          await eventually(() => here.told.resyncs > 0 && there.told.resyncs > 0, 'the listening connections');
          await views.writer(collection).commit([deal('d1', 1)], pos(3));
          await views.commitAll([
            { writer: views.writer(collection), documents: [deal('d2', 4)], checkpoint: pos(4) },
            { writer: views.writer(second), documents: [], checkpoint: pos(4), store: false },
          ]);
          // A checkpoint not stored, documents or not: the documents are kept, the stored checkpoint stays, the notice goes.
          await views.commitAll([{ writer: views.writer(collection), documents: [deal('d3', 5)], checkpoint: pos(5), store: false }]);
          expect(await views.findById<Deal>(collection, 'd3')).toEqual(deal('d3', 5));
          expect(await views.writer(collection).checkpoint()).toBe(pos(4));
          // A rebuild's commits are of a generation nobody reads yet.
          const target = await views.beginRebuild(second);
          await target.commit([deal('r1', 1)], pos(6));
          await views.writer(second).commit([], pos(5));
          const expected: Array<[string, LogPosition]> = [
            [collection, pos(3)],
            [collection, pos(4)],
            [second, pos(4)],
            [collection, pos(5)],
            [second, pos(5)],
          ];
          for (const { told } of [here, there]) {
            await eventually(() => told.reached.length >= expected.length, 'the notices');
            expect(told.reached).toEqual(expected);
          }
          here.stop();
          await views.writer(collection).commit([], pos(7));
          await eventually(() => there.told.reached.length > expected.length, 'the last notice');
          expect(here.told.reached).toHaveLength(expected.length);
          await target.abandon();
        } finally {
          await other.close();
        }
      });

    it('tells another instance on the same storage that a rebuilt generation was activated', async () => {
      await seed(2);
      const other = await subject.openAgain();
      try {
        await other.define(collection, [{ keys: { partnerId: 1, startAt: 1 } }]);
        const switched = new Promise<string>((resolve) => other.onGenerationSwitch(resolve));
        const target = await views.beginRebuild(collection);
        await target.commit([deal('r9', 9)], pos(9));
        await target.activate();
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise((r) => (timer = setTimeout(() => r('timeout'), HUNG_MS)));
        expect(await Promise.race([switched, timeout])).toBe(collection);
        clearTimeout(timer);
        expect((await other.find<Deal>(collection, {})).map((d) => d._id)).toEqual(['r9']);
        expect(await other.writer(collection).checkpoint()).toBe(pos(9));
      } finally {
        await other.close();
      }
    });
  });
}
