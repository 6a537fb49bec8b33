import type { Bitset } from './bitset';
import type { CollectionIndex } from './collection-index';
import { Sphere, withinSphere } from './geo-within.operator';
import type { Scalar } from './field-path';
import type { Range, SortedIndex } from './sorted-index';

type Doc = Record<string, unknown>;

const RANGE_OPS = new Set(['$eq', '$gt', '$gte', '$lt', '$lte']);
const isPlainObject = (v: unknown): v is Doc =>
  v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v));
const isRangeBound = (v: unknown): v is Scalar =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && !Number.isNaN(v));

/** The values an equality condition (`v`, `{$eq: v}`, `{$in: [...]}`) accepts, or null for any other condition. */
function equalityValues(condition: unknown): unknown[] | null {
  if (isRangeBound(condition)) return [condition];
  if (!isPlainObject(condition)) return null;
  if ('$eq' in condition) return isRangeBound(condition.$eq) ? [condition.$eq] : null;
  return Array.isArray(condition.$in) && condition.$in.every(isRangeBound) ? condition.$in : null;
}

/** What the indexes tell about a filter's matches. */
export interface Candidates {
  /** Slots surely holding every match (a set from the index's pool), or null: every slot. */
  bits: Bitset | null;
  /** Top-level keys of the filter whose conditions `bits` represents exactly: no need to test them. */
  exact: Set<string>;
  /** Every top-level key is exact: the candidates are the matches. */
  complete: boolean;
}

/**
 * The candidates of `filter`, from the indexes alone: the intersection of what each condition on
 * an indexed field allows (equality or `$in` on an equality index, a range on a sorted index), of
 * `$and` members, and the union of the branches of an `$or`. Conditions answered exactly by an
 * index (equality, `$in`, ranges of scalars on a field whose values are all scalars) need no test.
 */
export function candidateBits(index: CollectionIndex, filter: Doc): Candidates {
  let found: Bitset | null = null;
  const narrow = (bits: Bitset, shared: boolean) => {
    if (found) found.and(bits);
    else found = shared ? index.pool.take(index.size).or(bits) : bits;
  };
  const exact = new Set<string>();
  let complete = true;
  const nearby: Array<[string, Sphere]> = [];
  for (const [key, condition] of Object.entries(filter)) {
    let answered = false;
    const within = index.geoColumn(key) && geoCondition(condition);
    if (within) {
      // Scanned last, over the candidates the other conditions leave.
      nearby.push([key, within]);
      continue;
    }
    if ((key === '$and' || key === '$or') && Array.isArray(condition) && condition.length > 0 && condition.every(isPlainObject)) {
      const members = condition.map((member) => candidateBits(index, member));
      answered = members.every((m) => m.complete);
      if (key === '$and') {
        for (const m of members) if (m.bits) narrow(m.bits, false);
      } else if (members.every((m) => m.bits)) {
        narrow(
          members.reduce((union, m) => union.or(m.bits!), index.pool.take(index.size)),
          false,
        );
      }
    } else if (!key.startsWith('$')) {
      const values = equalityValues(condition);
      const equal = values && (key === '_id' ? byId(index, values) : index.equal(key, values));
      const sorted = index.sorted.get(key);
      if (equal) {
        narrow(equal, false);
        answered = isPlainObject(condition) ? Object.keys(condition).length === 1 : true;
      } else if (sorted?.usable) {
        const range = conditionRange(condition, sorted);
        if (range) narrow(sorted.rangeBits(range, index.size), true);
        answered = range !== null && onlyRanges(condition);
      }
    }
    if (answered) exact.add(key);
    else complete = false;
  }
  for (const [key, within] of nearby) {
    narrow(index.geoColumn(key)!.select(within, found, index.size, index.pool.take(index.size)), false);
    exact.add(key);
  }
  return { bits: found, exact, complete };
}

/** The sphere of a condition that is exactly `{$geoWithin: {$centerSphere: ...}}`, else null. */
function geoCondition(condition: unknown): Sphere | null {
  if (!isPlainObject(condition) || Object.keys(condition).length !== 1 || !('$geoWithin' in condition)) return null;
  try {
    return withinSphere(condition.$geoWithin);
  } catch {
    return null;
  }
}

function byId(index: CollectionIndex, ids: unknown[]): Bitset {
  const found = index.pool.take(index.size);
  for (const id of ids) {
    const slot = typeof id === 'string' ? index.slot(id) : undefined;
    if (slot !== undefined) found.add(slot);
  }
  return found;
}

/** True when `conditionRange` represents every operator of `condition`. */
function onlyRanges(condition: unknown): boolean {
  if (!isPlainObject(condition)) return isRangeBound(condition) || condition === null;
  return Object.entries(condition).every(([op, v]) => (RANGE_OPS.has(op) && isRangeBound(v)) || (op === '$eq' && v === null));
}

/**
 * The positions in `index` that surely hold every match of `filter`, from the conditions on its
 * field: those at the top (and in `$and` members) intersect, and an `$or` whose every branch
 * bounds the field gives the span of its branches. Null when nothing bounds the field.
 */
export function rangeOf(filter: Doc, index: SortedIndex): Range | null {
  let range: Range | null = null;
  for (const [key, condition] of Object.entries(filter)) {
    if (key === index.field) range = intersect(range, conditionRange(condition, index));
    else if (key === '$and' && Array.isArray(condition)) {
      for (const member of condition) if (isPlainObject(member)) range = intersect(range, rangeOf(member, index));
    } else if (key === '$or' && Array.isArray(condition) && condition.length > 0) {
      let span: Range | null = null;
      for (const branch of condition) {
        const r = isPlainObject(branch) ? rangeOf(branch, index) : null;
        if (!r) {
          span = null;
          break;
        }
        span = span ? { lo: Math.min(span.lo, r.lo), hi: Math.max(span.hi, r.hi) } : r;
      }
      range = intersect(range, span);
    }
  }
  return range;
}

function conditionRange(condition: unknown, index: SortedIndex): Range | null {
  if (isRangeBound(condition) || condition === null) return index.range('$eq', condition);
  if (!isPlainObject(condition)) return null;
  let range: Range | null = null;
  for (const [op, value] of Object.entries(condition)) {
    if (RANGE_OPS.has(op) && isRangeBound(value)) range = intersect(range, index.range(op, value));
    else if (op === '$eq' && value === null) range = intersect(range, index.range('$eq', null));
    else if (op === '$in' && Array.isArray(value) && value.length > 0 && value.every(isRangeBound)) {
      const ranges = value.map((v) => index.range('$eq', v));
      range = intersect(range, { lo: Math.min(...ranges.map((r) => r.lo)), hi: Math.max(...ranges.map((r) => r.hi)) });
    }
  }
  return range;
}

function intersect(a: Range | null, b: Range | null): Range | null {
  if (!a) return b;
  if (!b) return a;
  return { lo: Math.max(a.lo, b.lo), hi: Math.min(a.hi, b.hi) };
}
