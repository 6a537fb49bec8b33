import type { LogPosition } from './event-store.port';

/** A query in the MongoDB query language; both view stores run it unchanged. */
export type ViewFilter = Record<string, unknown>;

export type SortSpec = Record<string, 1 | -1>;

export interface FindOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
}

/**
 * An index a projection declares for its collection. MongoDB creates it; the embedded store uses
 * the equality keys for lookups (`1`/`-1`) and answers `2dsphere` fields by scanning.
 */
export interface IndexSpec {
  keys: Record<string, 1 | -1 | '2dsphere'>;
  unique?: boolean;
}

/** Every view document carries its id and the log position of the last event applied to it. */
export interface ViewDocument {
  _id: string;
  _pos: LogPosition;
}

/**
 * Writes into one generation of one collection. The live generation and a rebuild target have the
 * same shape, so one projection runner serves both.
 */
export interface ViewWriter {
  readonly collection: string;
  readonly generation: string;
  /** Current documents by id (absent ids are missing from the map). */
  getMany<T extends ViewDocument>(ids: string[]): Promise<Map<string, T>>;
  /**
   * Replaces the given documents and records `checkpoint`, as one step where the backend allows.
   * A document whose stored `_pos` is already at or past the written one is left alone, so
   * applying the same events twice changes nothing. Documents are never deleted: a projection
   * marks a removed record in a field of its own. This instance's readers see the commit once it
   * resolves; the backend may make it durable a little later (the embedded store saves documents
   * within 250 ms and a checkpoint that moved alone within 1 s, at close, and before activating a
   * rebuild; a failed save is tried again), but never stores documents apart from their
   * checkpoint, so a restart after a crash replays whatever was not yet saved.
   */
  commit<T extends ViewDocument>(documents: readonly T[], checkpoint: LogPosition): Promise<void>;
  /** Last position applied to this generation, or null before the first event. */
  checkpoint(): Promise<LogPosition | null>;
  /**
   * Makes what was committed durable now, where the backend saves a little later (the embedded
   * store); absent where a commit is durable once it resolves.
   */
  save?(): Promise<void>;
}

export interface RebuildTarget extends ViewWriter {
  /**
   * Once every document is written: what the generation needs before it serves and was left out
   * while it filled (its indexes, built once instead of at every write). Optional; the rebuild
   * calls it for all its targets at once, before activating any.
   */
  complete?(): Promise<void>;
  /** Makes this generation the one every reader and the live runner use (completing it first, if not yet). */
  activate(): Promise<void>;
  /** Drops this generation without using it. */
  abandon(): Promise<void>;
}

/**
 * One collection's part of a commit across collections (`ViewStore.commitAll`): its documents and
 * the position its view now includes.
 */
export interface ViewBatch {
  writer: ViewWriter;
  documents: readonly ViewDocument[];
  /** The view includes the log up to here. */
  checkpoint: LogPosition;
  /**
   * False: the checkpoint need not be stored now (a restart may replay from an older one, which
   * changes no document); a store that tells of checkpoints still tells it, and one that keeps no
   * document apart from its checkpoint stores it with the documents anyway. Default true.
   */
  store?: boolean;
  /**
   * True: this batch is durable before the later batches of the same commit are committed (a dead
   * letter before the checkpoint that passes its event), where the backend saves later. Default false.
   */
  durable?: boolean;
}

/**
 * Leases that divide the views among the processes keeping them (`ViewStore.leases`): each view is
 * kept by one live keeper at a time, and each keeper holds its fair part. A keeper that stops
 * renewing (stopped, killed, frozen) loses its leases when they lapse and the others take them.
 * Two keepers folding one view for a moment (a lease moving) is harmless: documents and
 * checkpoints never go back.
 */
export interface ViewLeases {
  /**
   * Says `keeper` is alive for `ttlMs` more and renews its leases; gives up those above its fair
   * part of `collections` (their number over the live keepers, rounded up) and takes free or lapsed
   * ones up to it. Returns the collections `keeper` holds now.
   */
  balance(keeper: string, collections: readonly string[], ttlMs: number): Promise<string[]>;
  /** Gives up every lease of `keeper` and its presence: the others take its views at their next balance. */
  leave(keeper: string): Promise<void>;
}

/** Told of the checkpoints committed by any process (`ViewStore.onCheckpoints`). */
export interface CheckpointListener {
  /** `collection`'s active generation includes the log up to `position`. */
  reached(collection: string, position: LogPosition): void;
  /** Notices may have been missed (the listening connection was opened, or opened again): read the checkpoints. */
  resync(): void;
}

/** How a collection is kept, where a store offers a choice. */
export interface DefineOptions {
  /**
   * The embedded store keeps it in memory: a small collection that nearly every request reads with
   * filters and sorts of every kind (the catalogue). Others it keeps on disk, reading what is asked.
   */
  keepInMemory?: boolean;
}

/**
 * The read side: collections of view documents that projections fill and queries read.
 *
 * Promises: reads of one collection see whole documents as committed (never half a commit);
 * documents returned are copies or deeply frozen (changing one never changes the view);
 * a collection has one active generation at a time, and switching generations is atomic for
 * readers. `onGenerationSwitch` tells a running projection that another process (the CLI's
 * rebuild) activated a new generation, so it must restart from that generation's checkpoint.
 *
 * Leaves out: deletion, change streams. Transactions across collections only where `commitAll`
 * says so.
 */
export abstract class ViewStore {
  abstract readonly backend: string;

  /**
   * Whether `onCheckpoints` tells every process of each checkpoint committed, stored or not: then a
   * keeper need not store a view's checkpoint at each page for waiting answers to see it (the
   * stored one only tells where a restart or another keeper goes on from, and replaying is harmless).
   */
  readonly tellsOfCheckpoints: boolean = false;

  /**
   * Whether `commitAll` stores all its batches' checkpoints in one write: then a keeper of a store
   * that tells of none stores every view's checkpoint with each page, so that an answer waiting on
   * a view that handled none of the page sees it reach the page at once, not at the next store of
   * idle checkpoints.
   */
  readonly storesCheckpointsTogether: boolean = false;

  /**
   * Whether the views live in this process (the embedded store: memory and files of its own) rather
   * than on a server other processes read too.
   */
  readonly inProcess: boolean = false;

  /** Declares a collection and its indexes; idempotent; call before the collection is used. */
  abstract define(collection: string, indexes: IndexSpec[], options?: DefineOptions): Promise<void>;

  abstract findById<T extends ViewDocument>(collection: string, id: string): Promise<T | null>;
  /** The documents of these ids, in the order of `ids` (absent ids are left out). */
  abstract findByIds<T extends ViewDocument>(collection: string, ids: readonly string[]): Promise<T[]>;
  abstract findOne<T extends ViewDocument>(collection: string, filter: ViewFilter): Promise<T | null>;
  abstract find<T extends ViewDocument>(collection: string, filter: ViewFilter, options?: FindOptions): Promise<T[]>;
  abstract count(collection: string, filter: ViewFilter): Promise<number>;

  /** The writer of the active generation. */
  abstract writer(collection: string): ViewWriter;

  /** A fresh, empty generation to replay the log into, invisible until activated. */
  abstract beginRebuild(collection: string): Promise<RebuildTarget>;

  /**
   * Active generation and checkpoint of every defined collection; `bytes`, what that generation
   * takes where the store can tell (a rebuild's plan weighs the views by it).
   */
  abstract status(): Promise<
    Array<{ collection: string; generation: string; checkpoint: LogPosition | null; documents: number; bytes?: number }>
  >;

  /**
   * Commits several collections' batches: every batch's documents and stored checkpoint (the same
   * rules as `ViewWriter.commit`: a document never over a newer one, a checkpoint never backwards).
   * A store that can commits them all in one step (all or none); by default, writer by writer in
   * the order given, so a failure may leave the first ones committed (their replay changes nothing).
   */
  async commitAll(batches: readonly ViewBatch[]): Promise<void> {
    for (const batch of batches) {
      if (batch.documents.length > 0 || batch.store !== false) await batch.writer.commit(batch.documents, batch.checkpoint);
      if (batch.durable) await batch.writer.save?.();
    }
  }

  /**
   * Writes documents ahead of their view's fold, for a request that answers from what it decided
   * and whose caller may read them next through any process: each document (whose `_pos` is at or
   * past the last event that made it) over a stored one that is older, never over a newer one; no
   * checkpoint moves, and the fold of the same events later changes nothing. Only for documents made
   * by the writes of the caller's own request, so that no event before them is left out. Batches
   * are written in the order given, each in one step (a reader may see an earlier batch before a
   * later one: give first the documents another leads to). True once written; false where the store keeps no document for other
   * processes, so the caller waits for the fold instead (the default: an in-process store's readers
   * wait for its own fold).
   */
  async writeAhead(batches: ReadonlyArray<{ collection: string; documents: readonly ViewDocument[] }>): Promise<boolean> {
    void batches;
    return false;
  }

  /**
   * Tells `listener` of each checkpoint committed from now on, by this process or another, soon after
   * the commit; returns an unsubscribe, or null where the store cannot tell (the caller then reads
   * `ViewWriter.checkpoint` itself). Notices can be lost (`resync` says when).
   */
  onCheckpoints(listener: CheckpointListener): (() => void) | null {
    void listener;
    return null;
  }

  /**
   * The leases dividing the views among several keeping processes, where the store can hold them;
   * null where it cannot (each keeping process then keeps every view).
   */
  leases(): ViewLeases | null {
    return null;
  }

  /**
   * Makes what replaced and deleted documents held unreadable in the store's own files, once their
   * writes are done: an erasure's values must not linger in a file beside the views. Nothing where
   * the server keeps the files (PostgreSQL's VACUUM, MongoDB's compaction are the operator's).
   */
  async discardReplaced(): Promise<void> {}

  /** Registers a listener for generation switches made elsewhere; returns an unsubscribe. */
  abstract onGenerationSwitch(listener: (collection: string) => void): () => void;

  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;
}

/**
 * The document `id` of `collection` if it is `partnerId`'s and `keep` holds of it, else null: to a
 * partner, another partner's records do not exist.
 */
export async function findOfPartner<T extends ViewDocument & { partnerId: string }>(
  views: ViewStore,
  collection: string,
  id: string,
  partnerId: string,
  keep: (doc: T) => boolean = () => true,
): Promise<T | null> {
  const doc = await views.findById<T>(collection, id);
  return doc && doc.partnerId === partnerId && keep(doc) ? doc : null;
}
