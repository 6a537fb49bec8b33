import type { ViewDocument } from '@deals/kernel';
import type { Bitset } from './bitset';
import { compareScalars, NOT_SCALAR, Scalar, sortValue, typeRank } from './field-path';
import { RangeCache } from './range-cache';

/** One write as an index sees it: the document before (absent when new) and after, and its slot. */
export interface Change {
  before: ViewDocument | undefined;
  after: ViewDocument;
  slot: number;
}

/** Positions `[lo, hi)` in a sorted index. */
export interface Range {
  lo: number;
  hi: number;
}

// Above this many changes in one commit, filtering and merging the whole array beats splicing each.
const SPLICE_LIMIT = 16;

const sortKeyOf = (doc: ViewDocument, path: string[]) => sortValue(doc as unknown as Record<string, unknown>, path);

/**
 * The documents of a collection (by slot) ordered by one field, then by `_id`, as MongoDB's sort
 * orders scalars (missing reads as null). Kept up to date on every commit by binary search and
 * splice, or by one merge for a large commit. A document whose value is an array or an object has
 * no place in such an order, so while any exists the index declines to answer (`usable` is false)
 * and the planner sorts or scans instead.
 */
export class SortedIndex {
  /** Sort values, parallel to `slots`. */
  keys: Scalar[] = [];
  slots: number[] = [];
  private readonly path: string[];
  private readonly ranges = new RangeCache();
  private unordered = 0;

  /** `bySlot` is the collection's documents by slot, shared and kept current by its owner. */
  constructor(
    readonly field: string,
    private readonly bySlot: readonly ViewDocument[],
  ) {
    this.path = field.split('.');
  }

  get usable(): boolean {
    return this.unordered === 0;
  }

  apply(changes: readonly Change[]): void {
    if (changes.length > SPLICE_LIMIT) this.merge(changes);
    else for (const change of changes) this.replace(change);
  }

  /** The slots at positions `range` (read it or copy it before asking again; see RangeCache). */
  rangeBits({ lo, hi }: Range, size: number): Bitset {
    return this.ranges.bits(this.slots, lo, hi, size);
  }

  /** Positions of the documents whose value satisfies `op value` (`$eq $gt $gte $lt $lte`), type by type as MongoDB compares. */
  range(op: string, value: Scalar): Range {
    const rank = typeRank(value);
    const typeStart = () => this.search((k) => typeRank(k) >= rank);
    const typeEnd = () => this.search((k) => typeRank(k) > rank);
    const lower = () => this.search((k) => compareScalars(k, value) >= 0);
    const upper = () => this.search((k) => compareScalars(k, value) > 0);
    switch (op) {
      case '$eq':
        return { lo: lower(), hi: upper() };
      case '$gt':
        return { lo: upper(), hi: typeEnd() };
      case '$gte':
        return { lo: lower(), hi: typeEnd() };
      case '$lt':
        return { lo: typeStart(), hi: lower() };
      default:
        return { lo: typeStart(), hi: upper() };
    }
  }

  /** First position where `after` holds (`after` is false, then true, along the index). */
  private search(after: (key: Scalar) => boolean): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (after(this.keys[mid])) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private replace({ before, after, slot }: Change): void {
    const oldKey = before ? sortKeyOf(before, this.path) : NOT_SCALAR;
    const newKey = sortKeyOf(after, this.path);
    if (before && oldKey === NOT_SCALAR) this.unordered--;
    if (newKey === NOT_SCALAR) this.unordered++;
    if (oldKey !== NOT_SCALAR && newKey !== NOT_SCALAR && compareScalars(oldKey, newKey) === 0) return;
    this.ranges.clear();
    const { keys, slots } = this;
    const from = oldKey === NOT_SCALAR ? -1 : this.locate(oldKey, after._id);
    if (newKey === NOT_SCALAR) {
      if (from >= 0) keys.splice(from, 1), slots.splice(from, 1);
      return;
    }
    let to = this.locate(newKey, after._id);
    if (from < 0) {
      keys.splice(to, 0, newKey);
      slots.splice(to, 0, slot);
      return;
    }
    // A changed key usually moves its entry a short way: shift the entries in between.
    if (to > from) to--;
    for (let i = from; i < to; i++) {
      keys[i] = keys[i + 1];
      slots[i] = slots[i + 1];
    }
    for (let i = from; i > to; i--) {
      keys[i] = keys[i - 1];
      slots[i] = slots[i - 1];
    }
    keys[to] = newKey;
    slots[to] = slot;
  }

  /** Position of the entry (key, id), or the one where it belongs. */
  private locate(key: Scalar, id: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const other = this.bySlot[this.slots[mid]]._id;
      const c = compareScalars(this.keys[mid], key) || (other < id ? -1 : other > id ? 1 : 0);
      if (c >= 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private merge(changes: readonly Change[]): void {
    this.ranges.clear();
    const replaced = new Set<number>();
    const added: Array<{ key: Scalar; id: string; slot: number }> = [];
    for (const { before, after, slot } of changes) {
      if (before) {
        replaced.add(slot);
        if (sortKeyOf(before, this.path) === NOT_SCALAR) this.unordered--;
      }
      const key = sortKeyOf(after, this.path);
      if (key === NOT_SCALAR) this.unordered++;
      else added.push({ key, id: after._id, slot });
    }
    added.sort((a, b) => compareScalars(a.key, b.key) || (a.id < b.id ? -1 : 1));
    const keys: Scalar[] = [];
    const slots: number[] = [];
    let j = 0;
    for (let i = 0; i < this.keys.length; i++) {
      const slot = this.slots[i];
      if (replaced.size && replaced.has(slot)) continue;
      const key = this.keys[i];
      // Reads the _id (a document, out of cache) only on a tie of keys.
      while (j < added.length && (compareScalars(added[j].key, key) || (added[j].id < this.bySlot[slot]._id ? -1 : 1)) < 0) {
        keys.push(added[j].key);
        slots.push(added[j++].slot);
      }
      keys.push(key);
      slots.push(slot);
    }
    for (; j < added.length; j++) {
      keys.push(added[j].key);
      slots.push(added[j].slot);
    }
    this.keys = keys;
    this.slots = slots;
  }
}
