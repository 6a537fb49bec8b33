import type { ViewDocument } from '@deals/kernel';

/**
 * A view document as MongoDB and FerretDB both store it, and back. FerretDB refuses a key holding a
 * `.` or starting with `$`, and an array directly inside an array, all of which a partner's own data
 * (a user's `partner_data`) may hold; it closes the connection on NaN and refuses infinities.
 * So a document holding any of those is stored escaped, marked by {@link ESCAPED}: in each key `%`,
 * `.` and `$` become `%25`, `%2E` and `%24` (plain names, the ones queries use, stay as they are),
 * and an array inside an array becomes `{ "%a": [...] }` (a key no escaped name can be). Numbers
 * are stored as JSON writes them, as the other stores keep them: NaN and infinities as null, -0 as 0.
 * A document needing none of it (nearly all) is stored as it is, and read back with one look-up.
 */
export const ESCAPED = '_escaped';
const WRAPPED = '%a';

type Json = unknown;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

const unfitKey = (key: string) => key.includes('.') || key.startsWith('$');
const unfitNumber = (value: number) => !Number.isFinite(value) || Object.is(value, -0);

/** What storing `value` as it is would meet: a key or a nesting to escape, a number to write as JSON does. */
function survey(value: Json, inArray: boolean, found: { escape: boolean; numbers: boolean }): void {
  if (typeof value === 'number') {
    if (unfitNumber(value)) found.numbers = true;
  } else if (Array.isArray(value)) {
    if (inArray) found.escape = true;
    for (const item of value) survey(item, true, found);
  } else if (isPlainObject(value))
    for (const key of Object.keys(value)) {
      if (unfitKey(key)) found.escape = true;
      survey(value[key], false, found);
    }
}

function stored(value: Json, inArray: boolean, escape: boolean): Json {
  if (typeof value === 'number') return unfitNumber(value) ? (Number.isFinite(value) ? 0 : null) : value;
  if (Array.isArray(value)) {
    const items = value.map((item) => stored(item, true, escape));
    return escape && inArray ? { [WRAPPED]: items } : items;
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, Json> = {};
  for (const [key, inner] of Object.entries(value))
    out[escape ? key.replace(/[%.$]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`) : key] = stored(inner, false, escape);
  return out;
}

function read(value: Json): Json {
  if (Array.isArray(value)) return value.map(read);
  if (!isPlainObject(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === WRAPPED && Array.isArray(value[WRAPPED])) return read(value[WRAPPED]);
  const out: Record<string, Json> = {};
  for (const key of keys) out[key.replace(/%(25|2E|24)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))] = read(value[key]);
  return out;
}

/** The document to store: itself when it holds nothing to escape or rewrite. */
export function toStored<T extends ViewDocument>(doc: T): T {
  const found = { escape: false, numbers: false };
  survey(doc, false, found);
  if (!found.escape && !found.numbers) return doc;
  const out = stored(doc, false, found.escape) as T;
  return found.escape ? { ...out, [ESCAPED]: true } : out;
}

/** The document as it was written, from what the server holds. */
export function fromStored<T extends ViewDocument>(doc: T): T;
export function fromStored<T extends ViewDocument>(doc: T | null): T | null;
export function fromStored<T extends ViewDocument>(doc: T | null): T | null {
  if (doc === null || !(ESCAPED in doc)) return doc;
  const { [ESCAPED]: _escaped, ...rest } = doc as T & { [ESCAPED]: boolean };
  return read(rest) as T;
}
