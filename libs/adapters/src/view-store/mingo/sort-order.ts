import type { SortSpec, ViewDocument } from '@deals/kernel';
import { Query } from 'mingo';
import { compareScalars, NOT_SCALAR, Scalar, sortValue } from './field-path';

const EVERYTHING = new Query({});

/**
 * `sort` with `_id` ascending appended when it is absent. MongoDB leaves the order of ties open;
 * fixing it makes every plan (index walk, sort of candidates, mingo) return the same page.
 */
function withIdTiebreak(sort: SortSpec): SortSpec {
  return '_id' in sort ? sort : { ...sort, _id: 1 };
}

/**
 * `docs` ordered by `sort` (ties by `_id`), as MongoDB and mingo order scalars: null and missing
 * first, then numbers, strings, booleans. When a sort value is an array or an object, mingo's own
 * sort decides, so that ordering stays exactly mingo's.
 */
export function sortDocuments<T extends ViewDocument>(docs: T[], sort: SortSpec, limit = Infinity): T[] {
  return (
    orderScalars(docs, sort, limit) ??
    EVERYTHING.find<T>(docs as unknown as Record<string, unknown>[])
      .sort(withIdTiebreak(sort))
      .all()
  );
}

/**
 * `docs` ordered by `sort` (ties by `_id`), or null when a sort value is an array or an object.
 * mingo's order of those is not a total order, so a part of the documents cannot be ordered on its
 * own the way mingo orders the whole: callers sorting runs of a walk then sort everything instead.
 * With a `limit`, only that many first documents are returned (and only they are sorted).
 */
export function orderScalars<T extends ViewDocument>(docs: T[], sort: SortSpec, limit = Infinity): T[] | null {
  if (docs.length < 2) return docs;
  const spec = withIdTiebreak(sort);
  const columns: Column[] = [];
  for (const field of Object.keys(spec)) {
    const key = column(docs, field.split('.'), spec[field]);
    if (!key) return null;
    columns.push(key);
  }
  const compare = comparator(columns);
  const order = 4 * limit < docs.length ? smallest(docs.length, limit, compare) : Array.from({ length: docs.length }, (_, i) => i);
  return order.sort(compare).map((i) => docs[i]);
}

type Compare = (a: number, b: number) => number;

/** One sort key's values by document position, typed by what they hold. */
type Column =
  | { kind: 'number'; values: Float64Array; direction: number }
  | { kind: 'string'; values: string[]; direction: number }
  | { kind: 'scalar'; values: Scalar[]; direction: number };

/** Values are read once per document, not at every comparison; null when one is not a scalar. */
function column(docs: readonly ViewDocument[], path: string[], direction: 1 | -1): Column | null {
  const values: Scalar[] = new Array(docs.length);
  let numbers = true;
  let strings = true;
  for (let i = 0; i < docs.length; i++) {
    const value = sortValue(docs[i] as unknown as Record<string, unknown>, path);
    if (value === NOT_SCALAR) return null;
    values[i] = value;
    numbers &&= typeof value === 'number';
    strings &&= typeof value === 'string';
  }
  if (numbers) return { kind: 'number', values: Float64Array.from(values as number[]), direction };
  return strings ? { kind: 'string', values: values as string[], direction } : { kind: 'scalar', values, direction };
}

function keyComparator(key: Column): Compare {
  const d = key.direction;
  if (key.kind === 'number') {
    const n = key.values;
    return (a, b) => (n[a] - n[b]) * d;
  }
  if (key.kind === 'string') {
    const s = key.values;
    return (a, b) => (s[a] < s[b] ? -d : s[a] > s[b] ? d : 0);
  }
  const v = key.values;
  return (a, b) => compareScalars(v[a], v[b]) * d;
}

/*
 * The usual sort is one key then `_id` (strings). Written out as one function, it compares about
 * twice as fast as a chain of per-key comparators.
 */
function comparator(columns: Column[]): Compare {
  const [first, second] = columns;
  if (columns.length === 2 && second.kind === 'string' && first.kind !== 'scalar') {
    const ids = second.values;
    const e = second.direction;
    const d = first.direction;
    if (first.kind === 'number') {
      const n = first.values;
      return (a, b) => (n[a] - n[b]) * d || (ids[a] < ids[b] ? -e : ids[a] > ids[b] ? e : 0);
    }
    const s = first.values;
    return (a, b) => (s[a] < s[b] ? -d : s[a] > s[b] ? d : ids[a] < ids[b] ? -e : ids[a] > ids[b] ? e : 0);
  }
  const keys = columns.map(keyComparator);
  if (keys.length === 1) return keys[0];
  return (a, b) => {
    for (const key of keys) {
      const c = key(a, b);
      if (c !== 0) return c;
    }
    return 0;
  };
}

/** The `k` smallest of `0..n-1` by `compare`, unordered: a bounded max-heap, n log k comparisons at worst. */
function smallest(n: number, k: number, compare: (a: number, b: number) => number): number[] {
  const heap: number[] = [];
  const swap = (a: number, b: number) => ([heap[a], heap[b]] = [heap[b], heap[a]]);
  for (let i = 0; i < n; i++) {
    if (heap.length < k) {
      heap.push(i);
      for (let at = heap.length - 1; at > 0 && compare(heap[at], heap[(at - 1) >> 1]) > 0; at = (at - 1) >> 1) swap(at, (at - 1) >> 1);
    } else if (k > 0 && compare(i, heap[0]) < 0) {
      heap[0] = i;
      for (let at = 0; ;) {
        const left = 2 * at + 1;
        let top = left < k && compare(heap[left], heap[at]) > 0 ? left : at;
        if (left + 1 < k && compare(heap[left + 1], heap[top]) > 0) top = left + 1;
        if (top === at) break;
        swap(at, top);
        at = top;
      }
    }
  }
  return heap;
}
