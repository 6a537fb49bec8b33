/** A value a sorted index or comparator orders: what JSON leaves behind once arrays and objects are set aside. */
export type Scalar = null | number | string | boolean;

/** Marks a sort value that is an array or an object: those are ordered by mingo, not here. */
export const NOT_SCALAR = Symbol('not-scalar');

// Inherited names that mingo refuses to read through; paths using them go to mingo.
const INHERITED = new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__']);
const DIGITS = /^\d+$/;

type Doc = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Doc => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The parts of a dotted path the compiled predicates handle, or null (array positions, inherited names). */
export function parsePath(path: string): string[] | null {
  const parts = path.split('.');
  return parts.every((part) => part !== '' && !INHERITED.has(part) && !DIGITS.test(part)) ? parts : null;
}

/**
 * True when `test` holds for some value at `parts`, MongoDB's way: an array met on the way fans
 * out over its elements, and a branch that ends early offers `undefined`. `test` sees the leaf
 * itself (an array stays whole; see `elementwise`).
 */
export function anyLeaf(parts: string[], test: (leaf: unknown) => boolean): (doc: Doc) => boolean {
  if (parts.length === 1) {
    const field = parts[0];
    return (doc) => test(doc[field]);
  }
  const visit = (value: unknown, i: number): boolean => {
    if (i === parts.length) return test(value);
    if (Array.isArray(value)) {
      if (DIGITS.test(parts[i])) return visit(value[Number(parts[i])], i + 1);
      for (const item of value) if (isPlainObject(item) && visit(item, i)) return true;
      return false;
    }
    if (!isPlainObject(value)) return test(undefined);
    return visit(value[parts[i]], i + 1);
  };
  return (doc) => visit(doc, 0);
}

/** A leaf test that also matches an array leaf when any element passes (a condition on an array field). */
export const elementwise =
  (test: (value: unknown) => boolean) =>
  (leaf: unknown): boolean =>
    Array.isArray(leaf) ? leaf.some(test) : test(leaf);

/** Every value at `parts` (array leaves spread), for equality indexes. */
export function leafValues(doc: Doc, parts: string[]): unknown[] {
  const found: unknown[] = [];
  anyLeaf(parts, (leaf) => {
    if (Array.isArray(leaf)) found.push(...leaf);
    else if (leaf !== undefined) found.push(leaf);
    return false;
  })(doc);
  return found;
}

/** What `doc` sorts by on `parts`: a scalar (missing reads as null, as MongoDB sorts it) or NOT_SCALAR. */
export function sortValue(doc: Doc, parts: string[]): Scalar | typeof NOT_SCALAR {
  let value: unknown = doc;
  for (const part of parts) {
    if (Array.isArray(value)) return NOT_SCALAR;
    if (!isPlainObject(value)) return null;
    value = value[part];
  }
  if (value === undefined || value === null) return null;
  return typeof value === 'object' ? NOT_SCALAR : (value as Scalar);
}

/** The order MongoDB gives scalars of different types: null, numbers, strings, booleans. */
export const typeRank = (value: Scalar): number => (value === null ? 0 : typeof value === 'number' ? 1 : typeof value === 'string' ? 2 : 3);

export function compareScalars(a: Scalar, b: Scalar): number {
  if (a === b) return 0;
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}
