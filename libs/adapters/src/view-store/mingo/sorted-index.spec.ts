import type { ViewDocument } from '@deals/kernel';
import fc from 'fast-check';
import { compareScalars, NOT_SCALAR, Scalar, sortValue } from './field-path';
import { SortedIndex } from './sorted-index';

type Doc = ViewDocument & { rank?: unknown };

/**
 * The sorted index is built on its first query and then caught up lazily, by splices or one merge,
 * on the next query or once a backlog grows. Whatever the order of commits and queries, it must
 * hold what sorting the current documents afresh gives: every scalar rank by value then `_id`, and
 * `usable` exactly while no document's value is an array or an object.
 */
const id = (n: number) => `d${String(n).padStart(4, '0')}`;
const rankArb = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 30 }) },
  { weight: 2, arbitrary: fc.constantFrom('a', 'b', null, true) },
  { weight: 1, arbitrary: fc.constantFrom([1, 2], { x: 1 }) },
);

/** Owns `bySlot` the way CollectionIndex does: documents are stored before the index hears of the commit. */
class Collection {
  readonly bySlot: Doc[] = [];
  readonly index = new SortedIndex('rank', this.bySlot);
  private readonly slotOf = new Map<string, number>();

  commit(writes: Array<[number, unknown]>): void {
    const changes = new Map<number, { before: Doc | undefined; after: Doc; slot: number }>();
    for (const [n, rank] of writes) {
      const after: Doc = { _id: id(n), _pos: '', rank };
      let slot = this.slotOf.get(after._id);
      if (slot === undefined) this.slotOf.set(after._id, (slot = this.bySlot.push(after) - 1));
      const before = changes.has(slot) ? changes.get(slot)!.before : this.bySlot[slot] === after ? undefined : this.bySlot[slot];
      this.bySlot[slot] = after;
      changes.set(slot, { before, after, slot });
    }
    this.index.apply([...changes.values()]);
  }

  expected(): { usable: boolean; ids: string[] } {
    const keyed = this.bySlot.map((doc) => ({ id: doc._id, key: sortValue(doc as unknown as Record<string, unknown>, ['rank']) }));
    const usable = keyed.every(({ key }) => key !== NOT_SCALAR);
    const ids = keyed
      .filter(({ key }) => key !== NOT_SCALAR)
      .sort((a, b) => compareScalars(a.key as Scalar, b.key as Scalar) || (a.id < b.id ? -1 : 1))
      .map(({ id }) => id);
    return { usable, ids };
  }

  actual(): { usable: boolean; ids: string[] } {
    const usable = this.index.usable;
    return { usable, ids: this.index.slots.map((slot) => this.bySlot[slot]._id) };
  }
}

describe('SortedIndex', () => {
  it('answers as a fresh sort would, however commits and queries interleave', () => {
    const stepArb = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.array(fc.tuple(fc.nat({ max: 60 }), rankArb), { minLength: 1, maxLength: 40 }).map((writes) => ({ writes })),
      },
      { weight: 1, arbitrary: fc.constant({ query: true as const }) },
    );
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 30 }), (steps) => {
        const collection = new Collection();
        for (const step of steps) {
          if ('writes' in step) collection.commit(step.writes);
          else expect(collection.actual()).toEqual(collection.expected());
        }
        expect(collection.actual()).toEqual(collection.expected());
      }),
      { numRuns: 300 },
    );
  });

  it('catches up by itself once a long backlog builds between queries', () => {
    const collection = new Collection();
    collection.commit(Array.from({ length: 500 }, (_, n): [number, unknown] => [n, n % 17]));
    expect(collection.actual()).toEqual(collection.expected());
    // Thousands of changes, a few at a time, with no query in between: the backlog limit is crossed.
    for (let round = 0; round < 3000; round++) collection.commit([[(round * 7) % 3000, (round * 13) % 31]]);
    expect(collection.actual()).toEqual(collection.expected());
  });

  it('builds in steps what a fresh sort gives, whatever the step, then keeps up as before', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat({ max: 200 }), rankArb), { maxLength: 150 }),
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.tuple(fc.nat({ max: 200 }), rankArb), { maxLength: 10 }),
        async (writes, step, later) => {
          const collection = new Collection();
          collection.commit(writes.length ? writes : [[0, 1]]);
          let pauses = 0;
          await collection.index.buildInSteps(async () => void pauses++, step);
          expect(collection.index.built).toBe(true);
          expect(pauses).toBeGreaterThanOrEqual(Math.ceil(collection.bySlot.length / step));
          expect(collection.actual()).toEqual(collection.expected());
          if (later.length) collection.commit(later);
          expect(collection.actual()).toEqual(collection.expected());
        },
      ),
      { numRuns: 200 },
    );
  });

  it('leaves the index to its first query when a commit comes in during a build in steps', async () => {
    const collection = new Collection();
    collection.commit(Array.from({ length: 50 }, (_, n): [number, unknown] => [n, n % 7]));
    let pauses = 0;
    await collection.index.buildInSteps(async () => {
      if (pauses++ === 2) collection.commit([[3, 99]]);
    }, 8);
    expect(collection.index.built).toBe(false);
    expect(collection.actual()).toEqual(collection.expected());
  });

  it('is not built while nothing asks for it, and builds from the documents as they are then', () => {
    const collection = new Collection();
    collection.commit([
      [1, 5],
      [2, 3],
      [3, [1]],
    ]);
    collection.commit([[3, 4]]);
    expect(collection.actual()).toEqual({ usable: true, ids: [id(2), id(3), id(1)] });
  });
});
