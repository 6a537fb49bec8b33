import fc from 'fast-check';
import { angularDistance, FindOptions, IndexSpec, SortSpec, ViewDocument, ViewFilter, ViewStore } from '@deals/kernel';
import { Query } from 'mingo';
import { join } from 'node:path';
import { Bitset } from '@deals/adapters/view-store/mingo/bitset';
import { GeoColumn } from '@deals/adapters/view-store/mingo/geo-column';
import { geoContext, withinSphere } from '@deals/adapters/view-store/mingo/geo-within.operator';
import { MingoViewStore } from '@deals/adapters/view-store/mingo/mingo-view-store.adapter';
import { RangeCache } from '@deals/adapters/view-store/mingo/range-cache';
import { tempDir } from '../support/temp-dir';
import { PostgresViewStore } from '@deals/adapters/view-store/postgres/postgres-view-store.adapter';
import { createTestDatabase, postgresUnavailableSync } from '../support/postgres';

/**
 * The embedded view store against mingo, its reference: for random small collections (written in
 * several commits, so that indexes are kept up to date by both their splice and merge paths, then
 * written again between two rounds of the same queries) and random filters in the part of the
 * query language the compiler handles, plus conditions it hands to mingo, `find` and `count`
 * answer exactly what mingo answers over the same documents. Sorted pages are compared whole, with
 * `_id` as the last sort key (the store breaks ties by it). The pieces whose mistakes would show
 * only on rare data are checked on their own: cached ranges, and the grid of points with its cap test.
 */

type Doc = ViewDocument & Record<string, unknown>;

// Coordinates in degrees on a grid of 0.001: doubles would crowd around zero.
const degrees = (spread: number) => fc.integer({ min: -spread * 1000, max: spread * 1000 }).map((n) => n / 1000);
const point = (spread: number) => fc.tuple(degrees(spread), degrees(spread));
const geoJson = point(1.5).map(([lng, lat]) => ({ type: 'Point', coordinates: [lng, lat] }));

const fieldsArb = fc.record(
  {
    state: fc.constantFrom('in-flight', 'approved', 'landed', null),
    categoryKey: fc.constantFrom('food', 'spa', 'Food', null, 7, '7', '007'),
    price: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constantFrom(null, '5', '05', '5.0', true)),
    startAt: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constant(null)),
    endAt: fc.integer({ min: 0, max: 20 }),
    soldOut: fc.boolean(),
    title: fc.oneof(fc.constantFrom('Spa day', 'spa night', 'Dinner', 'SPA', 'pizza', '', null), fc.constant(['spa', 'x'])),
    tags: fc.oneof(fc.array(fc.constantFrom('spa', 'food', 'x', 7, null), { maxLength: 3 }), fc.constant('spa')),
    regionId: fc.constantFrom('chi', 'bos'),
    partner: fc.oneof(
      fc.record({ tier: fc.constantFrom('gold', 'silver', null, 1), id: fc.constantFrom('p1', 'p2') }, { requiredKeys: ['id'] }),
      fc.constant('solo'),
    ),
    // Arrays of subdocuments hold scalars only: mingo and MongoDB disagree on arrays nested there.
    options: fc.oneof(
      fc.array(fc.record({ price: fc.integer({ min: 0, max: 10 }), name: fc.constantFrom('a', 'b') }, { requiredKeys: [] }), {
        maxLength: 3,
      }),
      fc.constant({}),
    ),
    locs: fc.oneof(fc.array(geoJson, { maxLength: 3 }), geoJson, point(1.5)),
    // Units held by the second they expire at (what a deal's view keeps), or other shapes on the way.
    inventory: fc.oneof(
      fc.record({ held: fc.constantFrom({}, { 1700: 1 }, { 1700: 2, 1701: 1 }, null, 5, 'x', [{}], [], [1]) }, { requiredKeys: [] }),
      fc.constantFrom(5, null, [{ held: {} }], [{ held: { 1: 1 } }]),
    ),
  },
  { requiredKeys: [] },
);

const pos = (n: number) => String(n).padStart(20, '0');
const collectionArb = fc.integer({ min: 0, max: 200 }).chain((n) =>
  fc.record({
    docs: fc.tuple(...Array.from({ length: n }, () => fieldsArb)),
    // Later versions of some documents, and how the writes are cut into commits.
    updates: fc.array(fc.tuple(fc.nat(), fieldsArb), { maxLength: n ? 60 : 0 }),
    // Writes between two rounds of the same queries: indexes and cached ranges move on.
    later: fc.array(fc.tuple(fc.nat(), fieldsArb), { maxLength: n ? 20 : 0 }),
    cuts: fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }),
  }),
);

const VALUES: unknown[] = [
  'in-flight',
  'approved',
  'landed',
  'food',
  'spa',
  'Food',
  'x',
  'chi',
  'gold',
  'a',
  'Spa day',
  '5',
  '05',
  '7',
  '7e0',
  'd003',
  0,
  3,
  5,
  7,
  10,
  15,
  true,
  false,
  null,
];
// Mostly values of each field's own type (so ranges and exclusions bite), sometimes any other.
const OWN: Record<string, unknown[]> = {
  state: ['in-flight', 'approved', 'landed', 'b', 'j'],
  categoryKey: ['food', 'spa', 'Food', 7, '7', '007'],
  price: [0, 2, 3, 5, 7, 10],
  startAt: [0, 4, 8, 12, 16, 20],
  endAt: [0, 4, 8, 12, 16, 20],
  soldOut: [true, false],
  title: ['Spa day', 'spa night', 'Dinner', 'SPA', 'pizza', '', 'm'],
  tags: ['spa', 'food', 'x', 7],
  regionId: ['chi', 'bos', 'c'],
  'partner.tier': ['gold', 'silver', 'h', 1],
  'options.price': [0, 3, 5, 7, 10],
  'options.name': ['a', 'b'],
  'inventory.held': [{}, null, 5, 'x'],
  _id: ['d000', 'd003', 'd010', 'd050', 'd100', 'd150'],
};
const FIELDS = Object.keys(OWN);
const valueOf = (field: string) =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...OWN[field]) }, { weight: 1, arbitrary: fc.constantFrom(...VALUES) });
const boundOf = (field: string) => valueOf(field).filter((v) => v !== null);
const scalarsOf = (field: string) => fc.uniqueArray(valueOf(field), { minLength: 0, maxLength: 3 });

const operatorCondition = (field: string) =>
  fc.oneof(
    valueOf(field).map(($eq) => ({ $eq })),
    valueOf(field).map(($ne) => ({ $ne })),
    scalarsOf(field).map(($in) => ({ $in })),
    scalarsOf(field).map(($nin) => ({ $nin })),
    fc.tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), boundOf(field)).map(([op, v]) => ({ [op]: v })),
    fc.tuple(boundOf(field), boundOf(field)).map(([$gte, $lt]) => ({ $gte, $lt })),
    fc.boolean().map(($exists) => ({ $exists })),
    fc
      .tuple(fc.constantFrom('spa', '^s', 'a$', 'SPA', 'x|d'), fc.constantFrom(undefined, '', 'i'))
      .map(([$regex, $options]) => ($options === undefined ? { $regex } : { $regex, $options })),
    fc.tuple(fc.constantFrom('$gt', '$lte', '$in'), boundOf(field)).map(([op, v]) => ({ $not: { [op]: op === '$in' ? [v] : v } })),
    fc.constant({ $not: /spa/i }),
  );
const compiledCondition = (field: string) =>
  fc.oneof(
    { weight: 2, arbitrary: valueOf(field) },
    { weight: 1, arbitrary: fc.constantFrom(/spa/i, /^D/) },
    { weight: 3, arbitrary: operatorCondition(field) },
    // Several operators on one field: an index may answer some of them only.
    { weight: 3, arbitrary: fc.tuple(operatorCondition(field), operatorCondition(field)).map(([a, b]) => ({ ...a, ...b })) },
  );
const value = fc.constantFrom(...VALUES);
const bound = fc.constantFrom(...VALUES.filter((v) => v !== null));
const scalars = fc.uniqueArray(value, { minLength: 0, maxLength: 3 });
// Conditions the compiler leaves to mingo.
const mingoCondition = fc.oneof(
  fc.integer({ min: 0, max: 2 }).map(($size) => ({ $size })),
  bound.map((v) => ({ $elemMatch: { $gte: v } })),
  scalars.map(($all) => ({ $all })),
  fc.constantFrom('string', 'number', 'array', 'null').map(($type) => ({ $type })),
  fc.constant({ $mod: [2, 0] }),
  fc.constant({}),
);
const geoCondition = fc
  .tuple(
    point(1.5),
    fc.integer({ min: 0, max: 300 }).map((n) => n / 10_000),
  )
  .map(([center, radians]) => ({ $geoWithin: { $centerSphere: [center, radians] } }));

const fieldFilter = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FIELDS).chain((f) => compiledCondition(f).map((c) => ({ [f]: c }))) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...FIELDS), mingoCondition).map(([f, c]) => ({ [f]: c })) },
  { weight: 1, arbitrary: geoCondition.map((c) => ({ locs: c })) },
);
const { filter: filterArb } = fc.letrec<{ filter: ViewFilter; clause: ViewFilter }>((tie) => ({
  clause: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 8, arbitrary: fieldFilter },
    { weight: 2, arbitrary: fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map(($or) => ({ $or })) },
    { weight: 1, arbitrary: fc.array(tie('filter'), { minLength: 1, maxLength: 2 }).map(($and) => ({ $and })) },
    { weight: 1, arbitrary: tie('filter').map((f) => ({ $nor: [f] })) },
  ),
  filter: fc.array(tie('clause'), { maxLength: 4 }).map((clauses) => Object.assign({}, ...clauses)),
}));
// As the service writes them: a few conditions on fields, at the top.
const flatFilterArb = fc.array(fieldFilter, { minLength: 1, maxLength: 3 }).map((clauses): ViewFilter => Object.assign({}, ...clauses));

const SORTABLE = ['price', 'endAt', 'startAt', 'state', 'title', 'categoryKey', 'partner.tier', 'tags', '_id'];
const optionsArb: fc.Arbitrary<FindOptions> = fc.record(
  {
    sort: fc
      .uniqueArray(fc.tuple(fc.constantFrom(...SORTABLE), fc.constantFrom(1 as const, -1 as const)), {
        minLength: 1,
        maxLength: 3,
        selector: ([f]) => f,
      })
      .map((keys) => Object.fromEntries(keys) as SortSpec),
    skip: fc.integer({ min: 0, max: 10 }),
    limit: fc.integer({ min: 0, max: 20 }),
  },
  { requiredKeys: [] },
);

const INDEXES: IndexSpec[] = [
  { keys: { state: 1 } },
  { keys: { categoryKey: 1 } },
  { keys: { price: 1 } },
  { keys: { endAt: -1 } },
  { keys: { title: 1 } },
  { keys: { tags: 1 } },
  { keys: { regionId: 1, endAt: 1 } },
  { keys: { 'partner.tier': 1 } },
  { keys: { locs: '2dsphere' } },
];

function reference(docs: Doc[], filter: ViewFilter, options: FindOptions): string[] {
  let cursor = new Query(filter, { context: geoContext }).find<Doc>(docs);
  if (options.sort) cursor = cursor.sort('_id' in options.sort ? options.sort : { ...options.sort, _id: 1 });
  if (options.skip) cursor = cursor.skip(options.skip);
  if (options.limit) cursor = cursor.limit(options.limit);
  return cursor.all().map((d) => d._id);
}

/** Random collections and queries: the store's `find` and `count` against mingo over the same documents. */
async function againstMingo(open: () => { views: ViewStore; collection: string }, runs: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      collectionArb,
      fc.array(fc.tuple(fc.oneof(flatFilterArb, filterArb), optionsArb), { minLength: 1, maxLength: 4 }),
      async ({ docs, updates, later, cuts }, queries) => {
        const { views, collection } = open();
        const latest = new Map<string, Doc>();
        let written = 0;
        const write = async (writes: Doc[]) => {
          for (let at = 0, c = 0; at < writes.length; at += cuts[c++ % cuts.length]) {
            const batch = writes.slice(at, at + cuts[c % cuts.length]);
            await views.writer(collection).commit(batch, batch[batch.length - 1]._pos);
          }
          for (const doc of writes) latest.set(doc._id, JSON.parse(JSON.stringify(doc)));
        };
        const versions = (changes: Array<[number, Record<string, unknown>]>) =>
          changes.map(([n, fields]): Doc => ({
            _id: `d${String(n % docs.length).padStart(3, '0')}`,
            _pos: pos(1000 + written++),
            ...fields,
          }));
        const check = async () => {
          const stored = [...latest.values()];
          for (const [filter, options] of queries) {
            const matches = reference(stored, filter, {});
            expect(await views.count(collection, filter)).toBe(matches.length);
            const found = (await views.find(collection, filter, options)).map((d) => d._id);
            if (options.sort) expect(found).toEqual(reference(stored, filter, options));
            else if (!options.skip && !options.limit) expect([...found].sort()).toEqual([...matches].sort());
            else {
              const expected = Math.max(0, Math.min(options.limit || Infinity, matches.length - (options.skip ?? 0)));
              expect(found).toHaveLength(expected);
              expect(new Set(found).size).toBe(found.length);
              expect(found.every((id) => matches.includes(id))).toBe(true);
            }
          }
        };
        try {
          await views.define(collection, INDEXES);
          await write([
            ...docs.map((fields, i): Doc => ({ _id: `d${String(i).padStart(3, '0')}`, _pos: pos(i + 1), ...fields })),
            ...versions(updates),
          ]);
          await check();
          await write(versions(later));
          await check();
        } finally {
          await views.close();
        }
      },
    ),
    { numRuns: runs },
  );
}

describe('embedded view store queries, against mingo', () => {
  const dir = tempDir('view-query');
  let stores = 0;

  afterAll(() => dir.remove());

  it('finds and counts what mingo finds and counts', async () => {
    await againstMingo(
      () => ({ views: new MingoViewStore(join(dir.path, String(++stores))), collection: 'deals' }),
      Number(process.env.PROPERTY_RUNS ?? 200),
    );
  });

  it('finds and counts what mingo finds and counts, on disk', async () => {
    await againstMingo(
      () => ({ views: new MingoViewStore(join(dir.path, String(++stores)), {}, undefined, false, 'as-defined'), collection: 'deals' }),
      Number(process.env.PROPERTY_RUNS ?? 200),
    );
  });

  it('keeps cached ranges right as they move from one query to the next', () => {
    const rangeArb = (n: number) => fc.tuple(fc.integer({ min: 0, max: n }), fc.integer({ min: 0, max: n }));
    const caseArb = fc
      .integer({ min: 0, max: 300 })
      .chain((n) =>
        fc.tuple(fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }), fc.array(rangeArb(n), { maxLength: 30 })),
      );
    fc.assert(
      fc.property(caseArb, ([slots, ranges]) => {
        const cache = new RangeCache();
        for (const [lo, hi] of ranges) {
          const slotsIn: number[] = [];
          cache.bits(slots, lo, hi, slots.length).each((slot) => {
            slotsIn.push(slot);
          });
          expect(slotsIn).toEqual(slots.slice(lo, Math.max(lo, hi)).sort((a, b) => a - b));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('selects points by its grid exactly as the haversine does, worldwide (poles, antimeridian)', () => {
    const anywhere = fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -90, max: 90, noNaN: true }));
    const caseArb = fc.record({
      center: anywhere,
      radians: fc.oneof(fc.double({ min: 0, max: 0.05, noNaN: true }), fc.double({ min: 0, max: 2, noNaN: true })),
      // Points near the centre (where the cut-offs matter) and anywhere; written twice, the second time moved.
      docs: fc.array(
        fc.tuple(
          fc.array(
            fc.tuple(fc.double({ min: -1, max: 1, noNaN: true }), fc.double({ min: -1, max: 1, noNaN: true }), fc.boolean(), anywhere),
            { maxLength: 3 },
          ),
          fc.boolean(),
        ),
        { maxLength: 80 },
      ),
    });
    fc.assert(
      fc.property(caseArb, ({ center: [cLng, cLat], radians, docs }) => {
        const column = new GeoColumn('locs');
        const near = (dLng: number, dLat: number): [number, number] => [
          ((cLng + dLng * radians * 60 + 540) % 360) - 180,
          Math.max(-90, Math.min(90, cLat + dLat * radians * 60)),
        ];
        const versions = docs.map(([points], slot) => ({
          _id: `d${slot}`,
          _pos: '1',
          locs: points.map(([dLng, dLat, close, far]) => ({ type: 'Point', coordinates: close ? near(dLng, dLat) : far })),
        }));
        column.apply(versions.map((after, slot) => ({ before: undefined, after, slot })));
        const moved = versions.map((doc, slot) =>
          docs[slot][1]
            ? { ...doc, locs: doc.locs.map((p) => ({ ...p, coordinates: near(p.coordinates[1] / 90, p.coordinates[0] / 180) })) }
            : doc,
        );
        column.apply(moved.map((after, slot) => ({ before: versions[slot], after, slot })));
        const sphere = withinSphere({ $centerSphere: [[cLng, cLat], radians] });
        const selected: number[] = [];
        column.select(sphere, null, moved.length, new Bitset(moved.length)).each((slot) => {
          selected.push(slot);
        });
        const expected = moved.flatMap((doc, slot) =>
          doc.locs.some(({ coordinates: [lng, lat] }) => angularDistance(cLat, cLng, lat, lng) <= radians) ? [slot] : [],
        );
        expect(selected).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

const pgUnavailable = postgresUnavailableSync();
if (pgUnavailable) {
  describe.skip(`PostgreSQL view store queries, against mingo — skipped: ${pgUnavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('PostgreSQL view store queries, against mingo', () => {
    let database: { url: string; drop: () => Promise<void> };
    let views: PostgresViewStore;
    let runs = 0;
    beforeAll(async () => {
      database = await createTestDatabase('query');
      views = new PostgresViewStore(database.url);
    });
    afterAll(async () => {
      await views?.close();
      await database?.drop();
    });

    it('finds and counts what mingo finds and counts', async () => {
      // One store, a collection per run; closing is the suite's.
      const shared = new Proxy(views, { get: (target, key) => (key === 'close' ? async () => undefined : Reflect.get(target, key)) });
      await againstMingo(() => ({ views: shared, collection: `deals_${++runs}` }), Number(process.env.PG_PROPERTY_RUNS ?? 60));
    });
  });
}
