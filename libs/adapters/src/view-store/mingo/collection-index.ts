import type { ViewDocument } from '@deals/kernel';
import { Bitset, BitsetPool } from './bitset';
import { leafValues, parsePath } from './field-path';
import { GeoColumn } from './geo-column';
import { Change, SortedIndex } from './sorted-index';

type Key = string;
type Doc = Record<string, unknown>;

const keyOf = (value: unknown): Key | null =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? `${typeof value}:${value}` : null;

// Keys holding at least this many documents keep a bitset once queried; smaller ones are cheaper
// to turn into bits on each query than to keep. A single-valued field so keeps at most one bitset
// per 1024 documents: 64 of 8 KB each for 64k documents.
const BITSET_MIN = 1024;

interface KeyEntry {
  slots: Set<number>;
  bits: Bitset | null;
}

class EqualityIndex {
  readonly byKey = new Map<Key, KeyEntry>();
  private readonly path: string[];

  constructor(readonly field: string) {
    this.path = field.split('.');
  }

  apply({ before, after, slot }: Change): void {
    if (this.path.length === 1) {
      const was = before ? (before as unknown as Doc)[this.field] : undefined;
      const is = (after as unknown as Doc)[this.field];
      // Most writes change a few fields of a document: a top-level value that was kept keeps its
      // entry. The same array or object is the same value: the store's documents are deep-frozen.
      if (before && was === is) return;
      // A top-level field that is not an array has one key at most: no sets to build.
      if (!Array.isArray(was) && !Array.isArray(is)) {
        const wasKey = before ? keyOf(was) : null;
        const isKey = keyOf(is);
        if (wasKey !== null && wasKey !== isKey) this.remove(wasKey, slot);
        if (isKey !== null) this.add(isKey, slot);
        return;
      }
    }
    const keys = this.keysOf(after);
    if (before) {
      for (const key of this.keysOf(before)) if (!keys.has(key)) this.remove(key, slot);
    }
    for (const key of keys) this.add(key, slot);
  }

  private add(key: Key, slot: number): void {
    let entry = this.byKey.get(key);
    if (!entry) this.byKey.set(key, (entry = { slots: new Set(), bits: null }));
    entry.slots.add(slot);
    entry.bits?.add(slot);
  }

  private remove(key: Key, slot: number): void {
    const entry = this.byKey.get(key);
    entry?.slots.delete(slot);
    entry?.bits?.delete(slot);
  }

  /** Adds the slots holding `key` to `found`. */
  addTo(found: Bitset, key: Key, size: number): void {
    const entry = this.byKey.get(key);
    if (!entry) return;
    if (!entry.bits && entry.slots.size >= BITSET_MIN) entry.bits = new Bitset(size).addAll(entry.slots);
    if (entry.bits) found.or(entry.bits);
    else found.addAll(entry.slots);
  }

  private keysOf(doc: ViewDocument): Set<Key> {
    const keys = new Set<Key>();
    for (const value of leafValues(doc as unknown as Doc, this.path)) {
      const key = keyOf(value);
      if (key !== null) keys.add(key);
    }
    return keys;
  }
}

/**
 * The indexes of one in-memory collection. Each document gets a slot (a dense number, kept for
 * good: view documents are never deleted) so that indexes can hold sets of documents as bitsets.
 * On the fields its projection declared (the first field of each non-geo index) it keeps an
 * equality index (array fields index each element, as MongoDB's multikey indexes do) and a sorted
 * index (`SortedIndex`); `_id` has a sorted index too. `2dsphere` fields keep their points
 * (`GeoColumn`).
 */
export class CollectionIndex {
  readonly bySlot: ViewDocument[] = [];
  readonly sorted = new Map<string, SortedIndex>();
  /** Scratch sets for the query running now; released when it is done. */
  readonly pool = new BitsetPool();
  private readonly slotOf = new Map<string, number>();
  private readonly equality = new Map<string, EqualityIndex>();
  private readonly geo = new Map<string, GeoColumn>();

  /** `fields`: those with `1`/`-1` indexes; `geoFields`: those with `2dsphere` ones. */
  constructor(fields: string[], geoFields: string[] = []) {
    for (const field of geoFields) this.geo.set(field, new GeoColumn(field));
    this.sorted.set('_id', new SortedIndex('_id', this.bySlot));
    // Paths through array positions or inherited names read differently in mingo; not indexed.
    for (const field of fields) {
      if (field === '_id' || !parsePath(field)) continue;
      this.equality.set(field, new EqualityIndex(field));
      this.sorted.set(field, new SortedIndex(field, this.bySlot));
    }
  }

  /** Number of slots (every document ever stored). */
  get size(): number {
    return this.bySlot.length;
  }

  slot(id: string): number | undefined {
    return this.slotOf.get(id);
  }

  /** Updates every index for a commit; each document appears at most once in `writes`. */
  apply(writes: ReadonlyArray<Omit<Change, 'slot'>>): void {
    const changes: Change[] = writes.map(({ before, after }) => {
      let slot = this.slotOf.get(after._id);
      if (slot === undefined) {
        slot = this.bySlot.push(after) - 1;
        this.slotOf.set(after._id, slot);
      }
      return { before, after, slot };
    });
    // Sorted indexes read the current documents from `bySlot` when they catch up.
    for (const { after, slot } of changes) this.bySlot[slot] = after;
    for (const index of this.equality.values()) for (const change of changes) index.apply(change);
    for (const index of this.sorted.values()) index.apply(changes);
    for (const column of this.geo.values()) column.apply(changes);
  }

  geoColumn(field: string): GeoColumn | undefined {
    return this.geo.get(field);
  }

  /** Slots whose `field` holds one of `values` (a set from `pool`), or null without an equality index on it. */
  equal(field: string, values: readonly unknown[]): Bitset | null {
    const index = this.equality.get(field);
    if (!index) return null;
    const keys = values.map(keyOf);
    if (keys.some((key) => key === null)) return null;
    const found = this.pool.take(this.size);
    for (const key of new Set(keys)) index.addTo(found, key as Key, this.size);
    return found;
  }
}
