import type { ViewFilter } from '@deals/kernel';
import { Query } from 'mingo';
import { anyLeaf, parsePath } from './field-path';
import { compares, DocTest, equals, every, exists, isNull, matches, memberOf, not, some } from './field-tests';
import { centerSphere, geoContext } from './geo-within.operator';

export type { DocTest } from './field-tests';

type Doc = Record<string, unknown>;
type Condition = { cost: number; test: DocTest };
/** A condition of the filter, with the top-level key it falls under. */
type Part = Condition & { key: string };

const CHEAP = 1;
const LOGICAL = 2;
const REGEX = 4;
const GEO = 8;
const MINGO = 16;

const isPlainObject = (v: unknown): v is Doc =>
  v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v));
const isEmptyObject = (v: unknown): boolean => isPlainObject(v) && Object.keys(v).length === 0;
const isOperator = (name: string) => /^\$[a-zA-Z0-9_]+$/.test(name);
// Values compared with ===, <, >: the scalar types JSON documents hold (NaN compares unlike mingo).
const isScalar = (v: unknown): v is string | number | boolean =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && !Number.isNaN(v));

/** A compiled filter: its test, and the test of what remains once some top-level keys are known to hold. */
export interface CompiledFilter {
  test: DocTest;
  /** The test of the conditions outside the top-level keys `known` (memoized per set of keys). */
  without(known: ReadonlySet<string>): DocTest;
}

/**
 * Compiles a filter in the MongoDB query language into plain functions, for the part of the
 * language the service writes: equality, `$eq $ne $in $nin $gt $gte $lt $lte $exists $regex $not`,
 * `$and $or`, dotted paths, array fields, `$geoWithin` with `$centerSphere`. Any other condition is
 * handed, on its own, to mingo (with the `$geoWithin` context), so the result is mingo's either
 * way; the differential property test holds both to that. Cheap conditions are tried first.
 */
export function compileFilter(filter: ViewFilter): CompiledFilter {
  const parts = filterParts(filter);
  const residues = new Map<string, DocTest>();
  return {
    test: conjunction(parts),
    without(known) {
      const key = [...known].sort().join('\u0000');
      let test = residues.get(key);
      if (!test) residues.set(key, (test = conjunction(parts.filter((p) => !known.has(p.key)))));
      return test;
    },
  };
}

function filterParts(filter: Doc): Part[] {
  const parts: Part[] = [];
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    if ((key === '$and' || key === '$or') && Array.isArray(value) && value.every(isPlainObject)) {
      const branches = value.map((branch) => conjunction(filterParts(branch)));
      parts.push({ key, cost: LOGICAL, test: key === '$and' ? every(branches) : some(branches) });
    } else if (key.startsWith('$')) {
      parts.push({ ...mingo({ [key]: value }), key });
    } else {
      for (const part of fieldParts(key, value)) parts.push({ ...part, key });
    }
  }
  return parts;
}

/** The conditions on one field, one per operator; mingo takes those the compiler does not handle. */
function fieldParts(field: string, condition: unknown): Condition[] {
  const path = parsePath(field);
  const whole = () => [mingo({ [field]: condition })];
  if (!path) return whole();
  if (isScalar(condition) || condition === null) return [required(operator(path, '$eq', condition), field, '$eq', condition)];
  if (condition instanceof RegExp) return [required(regex(path, condition, undefined), field, '$regex', condition)];
  if (!isPlainObject(condition)) return whole();
  const ops = Object.keys(condition);
  if (!ops.length || !ops.every(isOperator)) return whole();
  const parts: Condition[] = [];
  for (const op of ops) {
    if (op === '$options' && '$regex' in condition) continue;
    const options = op === '$regex' ? condition.$options : undefined;
    const compiled = op === '$regex' ? regex(path, condition.$regex, options) : operator(path, op, condition[op]);
    parts.push(
      compiled ??
        mingo({
          [field]: op === '$regex' && '$options' in condition ? { $regex: condition.$regex, $options: options } : { [op]: condition[op] },
        }),
    );
  }
  return parts;
}

function required(part: Condition | null, field: string, op: string, value: unknown): Condition {
  return part ?? mingo({ [field]: { [op]: value } });
}

function operator(path: string[], op: string, value: unknown): Condition | null {
  const topLevel = path.length === 1;
  switch (op) {
    case '$eq':
    case '$ne': {
      // mingo and MongoDB differ on null in arrays of subdocuments; mingo answers those itself.
      if (value === null && !topLevel) return null;
      const test = value === null ? isNull(path[0]) : isScalar(value) ? equals(path, value) : null;
      if (!test) return null;
      return { cost: CHEAP, test: op === '$eq' ? test : not(test) };
    }
    case '$in':
    case '$nin': {
      if (!Array.isArray(value)) return null;
      const plain = value.every((v) => isScalar(v) || v === null) && (topLevel || !value.includes(null));
      const test = plain ? memberOf(path, value) : membership(path, value);
      if (!test) return null;
      return { cost: CHEAP, test: op === '$in' ? test : not(test) };
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return isScalar(value) ? { cost: CHEAP, test: compares(path, op, value) } : null;
    case '$exists':
      return topLevel ? { cost: CHEAP, test: exists(path[0], !!value) } : null;
    case '$not':
      return negation(path, value);
    case '$geoWithin':
      return geo(path, value);
    default:
      return null;
  }
}

/**
 * `$in` of scalars, null and `{}` on any path (`{'inventory.held': {$nin: [null, {}]}}`: the deals
 * with units held), answered here where the path meets no array: a missing or null value is null,
 * an object matches `{}` when it has no keys. Where it meets an array, mingo answers for that
 * document (how MongoDB matches along arrays of subdocuments, which mingo follows).
 */
function membership(path: string[], values: unknown[]): DocTest | null {
  if (!values.every((v) => isScalar(v) || v === null || isEmptyObject(v))) return null;
  const scalars = new Set(values.filter(isScalar));
  const withNull = values.includes(null);
  const withEmpty = values.some(isEmptyObject);
  const query = new Query({ [path.join('.')]: { $in: values } }, { context: geoContext });
  return (doc) => {
    let v: unknown = doc;
    for (const key of path) {
      if (Array.isArray(v)) return query.test(doc);
      v = v !== null && typeof v === 'object' ? (v as Doc)[key] : undefined;
    }
    if (Array.isArray(v)) return query.test(doc);
    if (v === null || v === undefined) return withNull;
    if (isPlainObject(v)) return withEmpty && Object.keys(v).length === 0;
    return scalars.has(v as string | number | boolean);
  };
}

function regex(path: string[], pattern: unknown, options: unknown): Condition | null {
  if (typeof pattern !== 'string' && !(pattern instanceof RegExp)) return null;
  if (options !== undefined && (typeof options !== 'string' || !/^[ims]*$/.test(options))) return null;
  // Built as mingo builds it, so the flags end up the same.
  const re = new RegExp(pattern, options);
  if (re.global || re.sticky) return null;
  return { cost: REGEX, test: matches(path, re) };
}

function negation(path: string[], inner: unknown): Condition | null {
  let parts: Array<Condition | null>;
  if (inner instanceof RegExp) parts = [regex(path, inner, undefined)];
  else if (isPlainObject(inner) && Object.keys(inner).length && Object.keys(inner).every(isOperator)) {
    parts = Object.keys(inner)
      .filter((op) => !(op === '$options' && '$regex' in inner))
      .map((op) => (op === '$regex' ? regex(path, inner.$regex, inner.$options) : operator(path, op, inner[op])));
  } else return null;
  if (!parts.every((p): p is Condition => p !== null)) return null;
  return { cost: Math.max(...parts.map((p) => p.cost)), test: not(conjunction(parts)) };
}

function geo(path: string[], value: unknown): Condition | null {
  try {
    return { cost: GEO, test: anyLeaf(path, centerSphere(value)) };
  } catch {
    return null;
  }
}

function mingo(condition: Doc): Condition {
  const query = new Query(condition, { context: geoContext });
  return { cost: MINGO, test: (doc) => query.test(doc) };
}

function conjunction(parts: Condition[]): DocTest {
  const tests = [...parts].sort((a, b) => a.cost - b.cost).map((p) => p.test);
  return every(tests);
}
