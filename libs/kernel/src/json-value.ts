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
 * An array or object that passed before is not looked into again: a new document or event mostly
 * reuses parts of the one before it, so checking one costs what changed, not its whole size. (An
 * object frozen by other code is checked like any other.)
 *
 * What it saves: the event store and the embedded views hand the objects they were given to their
 * readers, instead of parsing back the JSON they have just written (a second copy of each event and
 * document, all garbage soon after).
 */
export function freezeJson(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null || checked.has(value)) return true;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      // A hole reads as undefined too, and JSON would turn it into null.
      if (value[i] === undefined || !freezeJson(value[i])) return false;
    }
  } else {
    // Not even a null prototype: JSON.parse makes none, so the copy would differ from the original.
    if (Object.getPrototypeOf(value) !== Object.prototype) return false;
    const record = value as Record<string, unknown>;
    for (const key in record) {
      if (!freezeJson(record[key])) return false;
    }
  }
  Object.freeze(value);
  checked.add(value);
  return true;
}
