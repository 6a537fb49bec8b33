import type { StreamRevision } from './event-store.port';

/** A stream's state at a revision, as its decider's snapshot codec wrote it. */
export interface StoredSnapshot {
  revision: StreamRevision;
  /** Id of the stream's event at `revision`: a snapshot whose event is not in the log is not used. */
  eventId: string;
  state: unknown;
}

/**
 * Snapshots of long streams' folded state, kept beside the event log: the latest of each stream
 * and state shape, and the keyed entries of a state (a hold closed, by its id) that are not kept in
 * its body. Only ever a cache of the fold: losing any of it costs a fold, never an answer.
 *
 * Promises: `save` writes a snapshot and its entries together or not at all, and never replaces a
 * later snapshot of the stream with an earlier one; its entries are saved even then, and an entry
 * keeps the lowest revision it was saved at (a process whose snapshot lost to another's goes on
 * from its own, earlier one); `lookup` finds only entries saved at `atRevision` or before; `forget`
 * removes a stream's snapshots and entries together.
 */
export abstract class SnapshotStore {
  /** The latest snapshot of the stream with this shape, or null. */
  abstract load(streamId: string, shape: string): Promise<StoredSnapshot | null>;

  /** Keeps `snapshot` (unless a later one is kept) and the entries, which hold at its revision. */
  abstract save(
    streamId: string,
    shape: string,
    snapshot: StoredSnapshot,
    entries: ReadonlyArray<readonly [string, unknown]>,
  ): Promise<void>;

  /** The entries among `keys` saved at `atRevision` or before. */
  abstract lookup(streamId: string, shape: string, keys: readonly string[], atRevision: StreamRevision): Promise<Array<[string, unknown]>>;

  /** Forgets the stream's snapshots and entries (one that does not match the log). */
  abstract forget(streamId: string): Promise<void>;

  abstract close(): Promise<void>;
}
