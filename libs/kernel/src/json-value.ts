/**
 * Deep-freezes `value` and returns true when it is a JSON value that comes back from
 * `JSON.parse(JSON.stringify(value))` as an equal value: null, booleans, finite numbers (not -0),
 * strings, and arrays and plain objects (of `Object.prototype`) of such (no hole, no undefined member). Returns false at the
 * first thing JSON would change (undefined, a Date, NaN, a class instance, a function…); the
 * caller then goes through JSON instead. Objects are frozen once their members passed, so a branch
 * that fails is left unfrozen from the failing member up; its siblings checked before stay frozen.
 *
 * A frozen array or plain object is taken as checked, without looking inside: the stores that use
 * this freeze only what passed it, or what `JSON.parse` made, and a new document or event mostly
 * reuses frozen parts of the one before it, so checking one costs what changed, not its whole size.
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
  if (value === null) return true;
  if (Array.isArray(value)) {
    if (Object.isFrozen(value)) return true;
    for (let i = 0; i < value.length; i++) {
      // A hole reads as undefined too, and JSON would turn it into null.
      if (value[i] === undefined || !freezeJson(value[i])) return false;
    }
  } else {
    // Not even a null prototype: JSON.parse makes none, so the copy would differ from the original.
    if (Object.getPrototypeOf(value) !== Object.prototype) return false;
    if (Object.isFrozen(value)) return true;
    const record = value as Record<string, unknown>;
    for (const key in record) {
      if (!freezeJson(record[key])) return false;
    }
  }
  Object.freeze(value);
  return true;
}
