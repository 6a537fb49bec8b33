/**
 * The event log's writes, run by the write thread inside a group transaction (see
 * {@link SqliteWriteThread}). Loaded by path in the worker: relative imports only.
 */
import type Database from 'better-sqlite3';

export interface AppendArgs {
  streamId: string;
  /**
   * Each event as `[id, type, data JSON, metadata JSON]`: encoded on the caller's thread, since a
   * string crosses to the worker far more cheaply than the objects it encodes.
   */
  events: Array<[string, string, string, string]>;
  /** A revision, 'no_stream' or 'any'. */
  expected: number | 'no_stream' | 'any';
}

export type AppendWritten = { written: true; revision: number; position: number } | { written: false; actual: number | null };

/**
 * Separates an append's fields when it crosses to the write thread as one string (see
 * {@link encodeAppend}). JSON text never holds it (JSON escapes every control character), so only
 * the stream id, the event ids and types need checking.
 */
const FIELD = '\u0001';

/**
 * The append as the write thread's program takes it: one string of its fields (stream id, expected
 * revision, then each event's id, type, data and metadata), which crosses threads several times
 * more cheaply than the arguments' objects and arrays. The arguments as they are if a stream id,
 * event id or type holds the separator (never, for this service's ids), or if any part is not of
 * the port's forms (a string; a revision that is a whole number from 0, 'no_stream' or 'any').
 */
export function encodeAppend(args: AppendArgs): string | AppendArgs {
  const { streamId, events, expected } = args;
  // Anything but the forms the port allows goes as it is, to be judged as before.
  const plainExpected = expected === 'no_stream' || expected === 'any' || (Number.isSafeInteger(expected) && (expected as number) >= 0);
  if (!plainExpected || !isField(streamId)) return args;
  let text = streamId + FIELD + String(expected);
  for (const [id, type, data, metadata] of events) {
    if (!isField(id) || !isField(type) || typeof data !== 'string' || typeof metadata !== 'string') return args;
    text += FIELD + id + FIELD + type + FIELD + data + FIELD + metadata;
  }
  return text;
}

const isField = (value: unknown): value is string => typeof value === 'string' && !value.includes(FIELD);

/** {@link encodeAppend}'s string, back to the arguments (in the write thread). */
export function decodeAppend(text: string): AppendArgs {
  const fields = text.split(FIELD);
  const events: AppendArgs['events'] = [];
  for (let i = 2; i < fields.length; i += 4) events.push([fields[i], fields[i + 1], fields[i + 2], fields[i + 3]]);
  const expected = fields[1];
  return { streamId: fields[0], events, expected: expected === 'no_stream' || expected === 'any' ? expected : Number(expected) };
}

/** What the write program answers, as numbers (cheap to send back): `[1, revision, position]` or `[0, actual revision or -1]`. */
export type AppendReply = [1, number, number] | [0, number];

/**
 * What the program appending to several streams answers: `[1, revision, position, revision,
 * position, …]`, an append's pair each, or `[0, index of the first append refused, its stream's
 * actual revision or -1]`.
 */
export type AppendAllReply = [1, ...number[]] | [0, number, number];

export function decodeAppendReply(reply: AppendReply): AppendWritten {
  return reply[0] === 1
    ? { written: true, revision: reply[1], position: reply[2] }
    : { written: false, actual: reply[1] === -1 ? null : reply[1] };
}

export const EVENTS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    stream_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    metadata TEXT NOT NULL,
    UNIQUE (stream_id, revision)
  )`;

export function prepareWrites(db: Database.Database) {
  const insert = db.prepare('INSERT INTO events (id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
  const lastRevision = db.prepare('SELECT MAX(revision) AS revision FROM events WHERE stream_id = ?').pluck();
  /** A stream's revision: as this group already wrote it, else as the file holds it (null: no stream). */
  const actualOf = (streamId: string, revisions: Map<string, unknown>) =>
    revisions.has(streamId) ? (revisions.get(streamId) as number | null) : (lastRevision.get(streamId) as number | null);
  const matches = (expected: AppendArgs['expected'], actual: number | null) =>
    expected === 'any' || (expected === 'no_stream' ? actual === null : actual === expected);
  /** Inserts an append's events after revision `actual`: its last revision and position. */
  const write = ({ streamId, events }: AppendArgs, actual: number | null, revisions: Map<string, unknown>): [number, number] => {
    let revision = actual;
    let position = 0;
    for (const [id, type, data, metadata] of events) {
      revision = revision === null ? 0 : revision + 1;
      const info = insert.run(id, streamId, revision, type, data, metadata);
      position = Number(info.lastInsertRowid);
    }
    revisions.set(streamId, revision);
    return [revision as number, position];
  };
  return {
    /** Checks the expected revision against the file (or what this batch already wrote), then inserts. */
    append(args: string | AppendArgs, revisions: Map<string, unknown>): AppendReply {
      const append = typeof args === 'string' ? decodeAppend(args) : args;
      const actual = actualOf(append.streamId, revisions);
      if (!matches(append.expected, actual)) return [0, actual ?? -1];
      return [1, ...write(append, actual, revisions)];
    },
    /** Appends to distinct streams, all or none: every expected revision checked before anything is inserted. */
    appendAll(list: Array<string | AppendArgs>, revisions: Map<string, unknown>): AppendAllReply {
      const appends = list.map((args) => (typeof args === 'string' ? decodeAppend(args) : args));
      const actuals = appends.map(({ streamId }) => actualOf(streamId, revisions));
      for (let i = 0; i < appends.length; i++) if (!matches(appends[i].expected, actuals[i])) return [0, i, actuals[i] ?? -1];
      const reply: AppendAllReply = [1];
      appends.forEach((append, i) => reply.push(...write(append, actuals[i], revisions)));
      return reply;
    },
  };
}
