import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { NewEvent } from '../ports/event-store.port';

/**
 * Personal data in the log, encrypted with a key of the person's own (crypto-shredding): an event
 * carries a user's personal values sealed in an envelope, their places in its data left null; the
 * user's key opens it on reading; once the key is deleted the values are gone everywhere the log
 * is, while the events themselves (and their hashes) stay.
 */

/** Where an event type keeps personal data: whose it is, and at which paths of its data. */
export interface PersonalFieldsOf {
  /**
   * The subject the data is about, whose key encrypts it: a user's id, or another person's prefixed
   * name (`resale-buyer:…`, `member:…`); null when the event names none (left as it is).
   */
  owner(data: Record<string, unknown>): string | null;
  /** Paths into the event's data, each a list of property names; one absent or null in an event is skipped. */
  paths: ReadonlyArray<readonly string[]>;
  /**
   * When the owner was erased: the event is refused (the default: a write about someone who is no
   * one), or written without its personal values (`drop`: what the event records stands without them).
   */
  whenErased?: 'refuse' | 'drop';
}

/** Each event type that holds personal data, with where. */
export type PersonalFields = ReadonlyMap<string, PersonalFieldsOf>;

/** The property of an event's data that holds its sealed personal values. The domain's events never name it. */
export const PERSONAL_ENVELOPE = '$personal';

/** The sealed values of one event: whose, which paths (dotted), and the ciphertext (base64: IV, GCM tag, then the JSON of the values). */
export interface PersonalEnvelope {
  owner: string;
  paths: string[];
  box: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Binds a box to its owner, event, type and paths: moved to another event, or its paths changed, it does not open. */
const aad = (owner: string, event: Pick<NewEvent, 'id' | 'type'>, paths: readonly string[]) =>
  Buffer.from(JSON.stringify(['deals-personal-v1', owner, event.type, event.id, paths]));

function valueAt(data: Record<string, unknown>, path: readonly string[]): unknown {
  let at: unknown = data;
  for (const name of path) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, name)) return undefined;
    at = (at as Record<string, unknown>)[name];
  }
  return at;
}

/** A copy of `data` with the value at `path` replaced (objects along the way copied, the rest shared). */
function withValueAt(data: Record<string, unknown>, path: readonly string[], value: unknown): Record<string, unknown> {
  const [name, ...rest] = path;
  const inner = data[name];
  return {
    ...data,
    [name]:
      rest.length === 0
        ? value
        : withValueAt(inner !== null && typeof inner === 'object' ? (inner as Record<string, unknown>) : {}, rest, value),
  };
}

/** Whom an event's personal data is about, if it holds any. */
export function personalOwner(fields: PersonalFields, event: Pick<NewEvent, 'type' | 'data'>): string | null {
  const of = fields.get(event.type);
  return of ? of.owner(event.data as Record<string, unknown>) : null;
}

/** Whether the event holds a personal value (one of its type's paths neither absent nor null). */
export function holdsPersonalValues(fields: PersonalFields, event: Pick<NewEvent, 'type' | 'data'>): boolean {
  const of = fields.get(event.type);
  if (!of) return false;
  const data = event.data as Record<string, unknown>;
  return of.paths.some((path) => {
    const value = valueAt(data, path);
    return value !== undefined && value !== null;
  });
}

/**
 * The event with its personal values sealed with `key` (the owner's): each value at one of its
 * type's paths (not absent, not null) moved into the envelope, its place left null. With no key
 * (the owner was erased) the values are dropped. An event with none is given back as it is.
 */
export function sealPersonalData<E extends Pick<NewEvent, 'id' | 'type' | 'data'>>(
  fields: PersonalFields,
  event: E,
  key: Buffer | null,
): E {
  const of = fields.get(event.type);
  const original = event.data as Record<string, unknown>;
  const owner = of?.owner(original);
  if (!of || !owner) return event;
  let data = original;
  const paths: string[] = [];
  const values: unknown[] = [];
  for (const path of of.paths) {
    const value = valueAt(original, path);
    if (value === undefined || value === null) continue;
    paths.push(path.join('.'));
    values.push(value);
    data = withValueAt(data, path, null);
  }
  if (paths.length === 0) return event;
  if (!key) return { ...event, data };
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES }).setAAD(aad(owner, event, paths));
  const text = Buffer.concat([cipher.update(JSON.stringify(values), 'utf8'), cipher.final()]);
  const envelope: PersonalEnvelope = { owner, paths, box: Buffer.concat([iv, cipher.getAuthTag(), text]).toString('base64') };
  return { ...event, data: { ...data, [PERSONAL_ENVELOPE]: envelope } };
}

/** The envelope of an event's data, if it has one. */
export function personalEnvelope(event: Pick<NewEvent, 'data'>): PersonalEnvelope | null {
  const data = event.data as Record<string, unknown> | null;
  return data !== null && typeof data === 'object' && Object.hasOwn(data, PERSONAL_ENVELOPE)
    ? (data[PERSONAL_ENVELOPE] as PersonalEnvelope)
    : null;
}

/**
 * The event as its writer gave it: the envelope opened with `key` and its values put back. With no
 * key (the owner erased), the envelope is dropped and the values' places stay null. An event
 * without an envelope is given back as it is.
 */
export function openPersonalData<E extends Pick<NewEvent, 'id' | 'type' | 'data'>>(event: E, key: Buffer | null): E {
  const envelope = personalEnvelope(event);
  if (!envelope) return event;
  const { [PERSONAL_ENVELOPE]: _sealed, ...rest } = event.data as Record<string, unknown>;
  if (!key) return { ...event, data: rest };
  const bytes = Buffer.from(envelope.box, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES }).setAAD(
    aad(envelope.owner, event, envelope.paths),
  );
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const values = JSON.parse(
    Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8'),
  ) as unknown[];
  let data = rest;
  envelope.paths.forEach((path, i) => (data = withValueAt(data, path.split('.'), values[i])));
  return { ...event, data };
}
