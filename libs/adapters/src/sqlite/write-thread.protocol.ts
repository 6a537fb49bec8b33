import type Database from 'better-sqlite3';

/**
 * A module of named writes for a {@link SqliteWriteThread}: `prepareWrites` runs once in the worker
 * with its connection and returns the programs. Each runs inside the batch's transaction; `scratch`
 * lives for one transaction (e.g. the revisions it already wrote). A program reports an expected
 * refusal as a value and throws only for the unexpected; it should touch `scratch` last, since a
 * throw undoes its writes but not its changes to `scratch`.
 */
export interface WriteProgramModule {
  prepareWrites(db: Database.Database): Record<string, (args: never, scratch: Map<string, unknown>) => unknown>;
}

/**
 * Scheduling priority (nice) of helper threads on Linux: below the event loop's, so that waking one
 * does not preempt the thread serving requests (posting a batch to a write thread costs the loop a
 * fraction of the time at nice 10 that it does at equal priority: docs/performance.md).
 */
export const HELPER_THREAD_NICE = 10;

export interface WriteThreadData {
  file: string;
  durability: 'full' | 'normal';
  /** Absolute path of the {@link WriteProgramModule}. */
  programs: string;
  /** Truncate the WAL now and then when it grows past this many bytes (0: leave it to SQLite). */
  walLimitBytes: number;
}

/**
 * A batch as it crosses to the worker: each request's kind and args, one after the other
 * (`[kind, args, kind, args, …]`). A flat array of strings is several times cheaper to copy between
 * threads than an array of objects (V8 rebuilds every object property by property on the other
 * side), so programs on hot paths take their args encoded as one string (the event log's append).
 */
export type WriteBatch = unknown[];

export interface WriteFailure {
  name: string;
  message: string;
  code?: string;
}

/**
 * The worker's answer to a batch: each request's outcome in order, flat (`[ok, value, ok, value,
 * …]`, `ok` 1 with the program's value or 0 with its {@link WriteFailure}); or, when the whole
 * batch was not written, `{ failed }`.
 */
export type WriteReply = unknown[] | { failed: WriteFailure };
