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
 * does not preempt the thread serving requests (measured on 2 cores under the purchases bench:
 * posting a batch to a write thread took 360 µs of the loop's time at equal priority, 80 µs at 10).
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

export type WriteBatch = Array<{ kind: string; args: unknown }>;

export interface WriteFailure {
  name: string;
  message: string;
  code?: string;
}

export interface WriteReply {
  results: Array<{ ok: true; value: unknown } | { ok: false; error: WriteFailure }>;
  /** Set when the whole batch was not written. */
  failed?: WriteFailure;
}
