import type { FindOptions, SortSpec, ViewDocument, ViewFilter } from '@deals/kernel';
import { CollectionIndex } from './collection-index';
import { compileFilter } from './predicate-compiler';
import { find, Plan } from './query-planner';

type Doc = ViewDocument & { state: string; endAt: number; price: number; title: string };

/**
 * Sorted pages by every plan (index walk, sorted candidates, full scan), against a plain sort:
 * ascending and descending, on `_id` alone and on a key with many ties broken by `_id` either way,
 * first pages and later ones. Catalogues of identical deals are the case where only `_id` orders.
 */
const id = (i: number) => `d${String(i).padStart(3, '0')}`;

function collection(docs: Doc[], commits = 1): CollectionIndex {
  const index = new CollectionIndex(['state', 'endAt', 'price', 'title']);
  const size = Math.ceil(docs.length / commits);
  // Written out of id order, in several commits, so the sorted indexes splice as well as merge.
  const shuffled = [...docs].reverse();
  for (let at = 0; at < shuffled.length; at += size)
    index.apply(shuffled.slice(at, at + size).map((after) => ({ before: undefined, after })));
  return index;
}

const same = (n: number): Doc[] =>
  Array.from({ length: n }, (_, i) => ({ _id: id(i), _pos: id(i), state: 'in-flight', endAt: 5, price: 0, title: 'Spa' }));
const varied = (n: number): Doc[] =>
  Array.from({ length: n }, (_, i) => ({
    _id: id(i),
    _pos: id(i),
    state: i % 3 ? 'in-flight' : 'landed',
    endAt: (i * 7) % 5,
    price: (i * 11) % 4,
    title: ['Spa', 'Zoo', 'Tour'][i % 3],
  }));

function expected(docs: Doc[], filter: (d: Doc) => boolean, sort: SortSpec, skip: number, limit: number): string[] {
  const keys: Array<readonly [string, number]> = '_id' in sort ? Object.entries(sort) : [...Object.entries(sort), ['_id', 1] as const];
  return docs
    .filter(filter)
    .sort((a, b) => {
      for (const [field, direction] of keys) {
        const [x, y] = [a[field as keyof Doc], b[field as keyof Doc]];
        if (x !== y) return (x < y ? -1 : 1) * direction;
      }
      return 0;
    })
    .slice(skip, limit ? skip + limit : undefined)
    .map((d) => d._id);
}

const SORTS: SortSpec[] = [
  { _id: -1 },
  { _id: 1 },
  { endAt: -1, _id: 1 },
  { endAt: -1, _id: -1 },
  { endAt: 1, _id: -1 },
  { endAt: 1 },
  { price: -1, _id: 1 },
  { price: 1, title: -1, _id: -1 },
  { title: -1 },
  // No index on _pos: candidates (or every document) sorted.
  { _pos: -1 },
  { _pos: 1, _id: -1 },
];
const PAGES: Array<[number, number]> = [
  [0, 1],
  [0, 3],
  [1, 1],
  [5, 2],
  [40, 5],
  [0, 0],
  [3, 0],
];
const FILTERS: Array<[ViewFilter, (d: Doc) => boolean]> = [
  [{}, () => true],
  [{ state: 'in-flight' }, (d) => d.state === 'in-flight'],
  [{ endAt: { $gt: 1 } }, (d) => d.endAt > 1],
  [
    {
      $or: [
        { state: 'in-flight', endAt: { $gt: 1 } },
        { state: 'landed', price: { $lte: 2 } },
      ],
    },
    (d) => (d.state === 'in-flight' && d.endAt > 1) || (d.state === 'landed' && d.price <= 2),
  ],
  [{ title: { $in: ['Spa', 'Zoo'] }, price: { $ne: 3 } }, (d) => ['Spa', 'Zoo'].includes(d.title) && d.price !== 3],
  // At most 64 candidates: sorted, never walked.
  [
    { _id: { $in: [id(3), id(7), id(12), id(40), id(43), id(250)] } },
    (d) => [id(3), id(7), id(12), id(40), id(43), id(250)].includes(d._id),
  ],
];

describe('query planner: sorted pages', () => {
  for (const [name, docs] of [
    ['44 identical deals', same(44)],
    ['300 identical deals', same(300)],
    ['300 varied deals', varied(300)],
  ] as const) {
    it(`every plan pages ${name} as a plain sort does`, () => {
      const plans = new Set<Plan>();
      for (const commits of [1, 7]) {
        const index = collection(docs, commits);
        for (const [filter, test] of FILTERS) {
          const prepared = { filter, compiled: compileFilter(filter) };
          for (const sort of SORTS) {
            for (const [skip, limit] of PAGES) {
              const options: FindOptions = { sort, skip, limit };
              const got = find(index, prepared, options, (plan) => plans.add(plan)).map((d) => d._id);
              expect({ filter, sort, skip, limit, got }).toEqual({
                filter,
                sort,
                skip,
                limit,
                got: expected(docs, test, sort, skip, limit),
              });
            }
          }
        }
      }
      expect([...plans].sort()).toEqual(docs.length > 64 ? ['candidates', 'scan', 'walk'] : ['candidates', 'scan']);
    });
  }

  it('answers d043 first for the 44 identical deals sorted by _id descending (deal-discovery counterexample)', () => {
    const index = collection(same(44));
    const filter = {
      $or: [
        { state: 'in-flight', endAt: { $gt: 1 } },
        { state: 'approved', endAt: { $gt: 1 } },
      ],
    };
    const prepared = { filter, compiled: compileFilter(filter) };
    expect(find(index, prepared, { sort: { _id: -1 }, skip: 0, limit: 1 }).map((d) => d._id)).toEqual(['d043']);
    expect(find(index, prepared, { sort: { _id: -1 }, skip: 1, limit: 2 }).map((d) => d._id)).toEqual(['d042', 'd041']);
  });
});
