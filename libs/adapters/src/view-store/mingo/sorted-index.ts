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

/** A document's place in the order: its sort value, then its id. */
interface Entry {
  key: Scalar;
  id: string;
  slot: number;
}

/** The index's order: by sort value, then by id (unique within a collection). */
const compareEntries = (a: Entry, b: Entry) => compareScalars(a.key, b.key) || (a.id < b.id ? -1 : 1);

/** Positions `[lo, hi)` in a sorted index. */
export interface Range {
  lo: number;
  hi: number;
}

// Above this many changes at once, filtering and merging the whole array beats splicing each.
const SPLICE_LIMIT = 16;
// Changes an index may owe before a write brings it up to date without waiting for a query.
const PENDING_MIN = 1024;

const sortKeyOf = (doc: ViewDocument, path: string[]) => sortValue(doc as unknown as Record<string, unknown>, path);

/**
 * The documents of a collection (by slot) ordered by one field, then by `_id`, as MongoDB's sort
 * orders scalars (missing reads as null). Built on the first query that asks for it, or by `buildInSteps` (most indexed
 * fields are only ever matched by equality, which `EqualityIndex` answers) and from then on kept
 * up to date lazily: a commit only notes which slots changed, and the next query (or a backlog of
 * 1,024 changes plus an eighth of the index) brings the arrays up to date by binary search and shifting, or by one
 * merge for many changes. Write-heavy collections so pay for ordering once per query, not once per
 * commit. A document whose value is an array or an object has no place in such an order, so while
 * any exists the index declines to answer (`usable` is false) and the planner sorts or scans
 * instead.
 */
export class SortedIndex {
  private sortedKeys: Scalar[] = [];
  private sortedSlots: number[] = [];
  private isBuilt = false;
  /** Slots changed since the arrays were brought up to date → each one's document as the arrays hold it (absent from them: undefined). */
  private readonly pending = new Map<number, ViewDocument | undefined>();
  private readonly path: string[];
  private readonly ranges = new RangeCache();
  private unordered = 0;
  /** Commits noted so far (a build in steps gives up when one comes in meanwhile). */
  private writes = 0;

  /** `bySlot` is the collection's documents by slot, shared and kept current by its owner. */
  constructor(
    readonly field: string,
    private readonly bySlot: readonly ViewDocument[],
  ) {
    this.path = field.split('.');
  }

  /** Whether a query (or `buildInSteps`) has built the arrays yet. */
  get built(): boolean {
    return this.isBuilt;
  }

  /**
   * Builds the arrays a step at a time, awaiting `pause()` after each `step` entries read, sorted
   * or merged (a merge sort of sorted runs), for a generation not serving yet: built in one go, a
   * large collection's index holds the event loop up. A write meanwhile (none is expected)
   * leaves the index unbuilt, for its first query to build as before.
   */
  async buildInSteps(pause: () => Promise<void>, step = 4096): Promise<void> {
    if (this.isBuilt) return;
    const writes = this.writes;
    let runs: Entry[][] = [];
    let unordered = 0;
    for (let from = 0; from < this.bySlot.length; from += step) {
      const run: Entry[] = [];
      for (let slot = from; slot < Math.min(from + step, this.bySlot.length); slot++) {
        const doc = this.bySlot[slot];
        const key = sortKeyOf(doc, this.path);
        if (key === NOT_SCALAR) unordered++;
        else run.push({ key, id: doc._id, slot });
      }
      runs.push(run.sort(compareEntries));
      await pause();
    }
    while (runs.length > 1) {
      const merged: Entry[][] = [];
      for (let r = 0; r < runs.length; r += 2) {
        const [a, b = []] = [runs[r], runs[r + 1]];
        const out: Entry[] = new Array(a.length + b.length);
        for (let i = 0, j = 0, k = 0; k < out.length;) {
          for (const until = Math.min(out.length, k + step); k < until; k++)
            out[k] = j >= b.length || (i < a.length && compareEntries(a[i], b[j]) < 0) ? a[i++] : b[j++];
          if (b.length) await pause();
        }
        merged.push(out);
      }
      runs = merged;
    }
    if (this.isBuilt || this.writes !== writes) return;
    const sorted = runs[0] ?? [];
    this.sortedKeys = sorted.map((entry) => entry.key);
    this.sortedSlots = sorted.map((entry) => entry.slot);
    this.unordered = unordered;
    this.isBuilt = true;
    this.ranges.clear();
  }

  get usable(): boolean {
    this.refresh();
    return this.unordered === 0;
  }

  /** Sort values, parallel to `slots`. */
  get keys(): readonly Scalar[] {
    this.refresh();
    return this.sortedKeys;
  }

  get slots(): readonly number[] {
    this.refresh();
    return this.sortedSlots;
  }

  /** Notes a commit's changes; `bySlot` must hold their `after` documents before the next query. */
  apply(changes: readonly Change[]): void {
    this.writes++;
    if (!this.isBuilt) return;
    for (const { before, slot } of changes) if (!this.pending.has(slot)) this.pending.set(slot, before);
    if (this.pending.size > PENDING_MIN + (this.sortedKeys.length >>> 3)) this.refresh();
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
    const keys = this.keys;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (after(keys[mid])) hi = mid;
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
    const { sortedKeys: keys, sortedSlots: slots } = this;
    const from = oldKey === NOT_SCALAR ? -1 : this.locate(oldKey, after._id);
    if (newKey === NOT_SCALAR) {
      if (from >= 0) {
        keys.splice(from, 1);
        slots.splice(from, 1);
      }
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
    const { sortedKeys: keys, sortedSlots: slots } = this;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const other = this.bySlot[slots[mid]]._id;
      const c = compareScalars(keys[mid], key) || (other < id ? -1 : other > id ? 1 : 0);
      if (c >= 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private merge(changes: readonly Change[]): void {
    this.ranges.clear();
    const replaced = new Set<number>();
    const added: Entry[] = [];
    for (const { before, after, slot } of changes) {
      if (before) {
        replaced.add(slot);
        if (sortKeyOf(before, this.path) === NOT_SCALAR) this.unordered--;
      }
      const key = sortKeyOf(after, this.path);
      if (key === NOT_SCALAR) this.unordered++;
      else added.push({ key, id: after._id, slot });
    }
    added.sort(compareEntries);
    const keys: Scalar[] = [];
    const slots: number[] = [];
    let j = 0;
    for (let i = 0; i < this.sortedKeys.length; i++) {
      const slot = this.sortedSlots[i];
      if (replaced.size && replaced.has(slot)) continue;
      const key = this.sortedKeys[i];
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
    this.sortedKeys = keys;
    this.sortedSlots = slots;
  }

  /** Brings the arrays up to date: built from every document the first time, then by the noted changes. */
  private refresh(): void {
    if (!this.isBuilt) {
      this.isBuilt = true;
      this.merge(this.bySlot.map((after, slot) => ({ before: undefined, after, slot })));
      return;
    }
    if (this.pending.size === 0) return;
    const changes: Change[] = [];
    for (const [slot, before] of this.pending) changes.push({ before, after: this.bySlot[slot], slot });
    this.pending.clear();
    if (changes.length > SPLICE_LIMIT) this.merge(changes);
    else for (const change of changes) this.replace(change);
  }
}
