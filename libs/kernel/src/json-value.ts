/** Arrays and objects that passed {@link freezeJson} (and were frozen by it). */
const checked = new WeakSet<object>();

/**
 * Deep-freezes `value` and returns true when it is a JSON value that comes back from
 * `JSON.parse(JSON.stringify(value))` as an equal value: null, booleans, finite numbers (not -0),
 * strings, and plain arrays and plain objects (of `Array.prototype`, `Object.prototype`) of such,
 * with no hole and no undefined member. Returns false at the first thing JSON would change
 * (undefined, a Date, NaN, a class instance, a function…); the caller then goes through JSON
 * instead. Objects are frozen once their members passed, so the branch that fails is left unfrozen
 * from the failing member up; members checked before it stay frozen. Not looked for, as nothing
 * here makes them: symbol keys, named members on an array, and a non-enumerable `toJSON`.
 *
 * A part that passed before is not looked into again if it is large ({@link REMEMBERED_FROM}): a
 * new document or event mostly reuses parts of the one before it, so checking one costs what
 * changed, not its whole size. Small parts and the values given themselves are looked through
 * again when met again: remembering each object a purchase makes cost more than that (a WeakSet
 * entry each, ~24 a purchase, was 6% of the event loop's time). An object frozen by other code is
 * checked like any other.
 *
 * What it saves: the event store and the embedded views hand the objects they were given to their
 * readers, instead of parsing back the JSON they have just written (a second copy of each event and
 * document, all garbage soon after).
 */
export function freezeJson(value: unknown): boolean {
  // The value itself is not remembered: callers pass whole events and documents, each new, which
  // come back (if ever) only as parts of others.
  return check(value, false) >= 0;
}

/**
 * A part of at least this many values (itself and everything in it) is remembered once it passed.
 * Remembering costs a WeakSet entry (~0.5 µs, and work for every garbage collection while the part
 * lives); a smaller part costs less to look through again than to remember.
 */
const REMEMBERED_FROM = 12;

/**
 * How many values `value` holds, itself included, counting a remembered part as one; -1 if it
 * fails. `remember`: whether `value` may be remembered (its parts always may).
 */
function check(value: unknown, remember = true): number {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return 1;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? 1 : -1;
    case 'object':
      break;
    default:
      return -1;
  }
  if (value === null || checked.has(value)) return 1;
  let size = 1;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return -1;
    for (let i = 0; i < value.length; i++) {
      // A hole reads as undefined too, and JSON would turn it into null.
      const member = value[i];
      const n = member === undefined ? -1 : check(member);
      if (n < 0) return -1;
      size += n;
    }
  } else {
    // Not even a null prototype: JSON.parse makes none, so the copy would differ from the original.
    if (Object.getPrototypeOf(value) !== Object.prototype) return -1;
    const record = value as Record<string, unknown>;
    for (const key in record) {
      const n = check(record[key]);
      if (n < 0) return -1;
      size += n;
    }
  }
  Object.freeze(value);
  if (remember && size >= REMEMBERED_FROM) {
    checked.add(value);
    return 1;
  }
  return size;
}
