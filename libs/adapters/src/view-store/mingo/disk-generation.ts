import { FindOptions, freezeJson, LogPosition, ViewDocument } from '@deals/kernel';
import Database from 'better-sqlite3';
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { truncateWal } from '../../sqlite/open-durable-database';
import { DocumentKeys } from './document-keys';
import { checkpointOnFile, documentsOnFile, FileStatements, fileStatements, GENERATION_TABLES } from './generation-files';
import { KeysTable } from './keys-table';
import { parseFrozen } from './parse-frozen';
import type { PreparedFilter } from './query-planner';
import { sortDocuments } from './sort-order';
import { viewWriteThread, ViewWriteThread } from './view-write-thread';

/** Parsed documents kept per generation, most recently used last; as many ids known not to be on file. */
const CACHED_DOCUMENTS = 2000;

/** The page cache of a rebuild's generation, in KiB (SQLite's default is 2 MB). */
const BULK_CACHE_KIB = 32 * 1024;

/**
 * One generation of a collection that lives on disk, not in memory: its documents in the
 * generation's SQLite file (`docs`, the same table the in-memory generations mirror to), and the
 * values of the fields its indexes name in a `keys` table (one row per value, array elements each),
 * which answers a query's equalities and number ranges (keys-table.ts). Queries read the candidates' documents and
 * decide the rest of the filter, the sort and the page as the in-memory store does (the compiled
 * filter; mingo for what it leaves). Commits are seen at once (the documents are held as pending)
 * and written to the file a little later (`writeDelayMs`) by the view write thread, in one
 * transaction with the checkpoint they reached, each changed document once however many commits
 * changed it; one write is under way at a time, and what is committed meanwhile waits for the next.
 * A query first has everything pending written (and waits for it), so that its selections on the
 * keys table see every commit. A crash loses at most the pending writes, never splitting documents
 * from their checkpoint: a restart replays them from the log. For the collections that grow with
 * the history (purchases, coupons, accounts): the process then holds only the documents it reads
 * lately. A rebuild's generation, read by no one until it is activated, writes through, here.
 */
export class DiskGeneration {
  checkpoint: LogPosition | null;
  /** Since when pending writes have not reached the file, and why; null while writes succeed. */
  saveFailing: { since: number; error: string } | null = null;
  private readonly cache = new Map<string, ViewDocument>();
  /**
   * Ids looked up and found nowhere since the last write, most recent last: a new document (a
   * purchase, an event) is looked up by its projection, then by its commit; the file is asked once.
   * Every document this generation writes passes through `remember`; another writer of the file is
   * seen again from the next write on.
   */
  private readonly absent = new Set<string>();
  /** Committed documents not yet sent to the file, the latest of each. */
  private pending = new Map<string, ViewDocument>();
  /** The write under way on the thread: its request, its documents and the checkpoint it writes. */
  private inFlight: { seq: number; docs: Map<string, ViewDocument>; checkpoint: LogPosition | null } | null = null;
  /** Why the last write failed; null when it succeeded. */
  private lastWriteError: string | null = null;
  private savedCheckpoint: LogPosition | null;
  private writeTimer: NodeJS.Timeout | null = null;
  private readonly table: KeysTable;
  private readonly statements: FileStatements & { get: Database.Statement };
  private documents: number;

  constructor(
    readonly collection: string,
    readonly name: string,
    private readonly db: Database.Database,
    fields: readonly string[],
    private bulk = false,
    /** How long a commit waits for others to join its write to the file. */
    private readonly writeDelayMs = 0,
    private readonly writeThread: ViewWriteThread = viewWriteThread,
  ) {
    if (bulk) {
      // A rebuild's generation, read by no one until it is activated (and dropped if the rebuild
      // fails): written without a journal or syncs, with a larger page cache, its keys table made
      // once, and made durable once, by `save`, before its activation.
      db.pragma('journal_mode = OFF');
      db.pragma('synchronous = OFF');
      db.pragma(`cache_size = -${BULK_CACHE_KIB}`);
    }
    this.table = new KeysTable(db, new DocumentKeys(fields));
    db.exec(GENERATION_TABLES);
    this.table.keyIfFieldsChanged();
    this.statements = { ...fileStatements(db), get: db.prepare('SELECT body FROM docs WHERE id = ?').pluck() };
    this.checkpoint = checkpointOnFile(db);
    this.savedCheckpoint = this.checkpoint;
    this.documents = documentsOnFile(db);
  }

  get(id: string): ViewDocument | undefined {
    const waiting = this.pending.get(id) ?? this.inFlight?.docs.get(id);
    if (waiting) return waiting;
    const cached = this.cache.get(id);
    if (cached) {
      this.cache.delete(id);
      this.cache.set(id, cached);
      return cached;
    }
    if (this.absent.has(id)) return undefined;
    const body = this.statements.get.get(id) as string | undefined;
    if (body === undefined) {
      this.absent.add(id);
      if (this.absent.size > CACHED_DOCUMENTS) this.absent.delete(this.absent.values().next().value!);
      return undefined;
    }
    return this.remember(parseFrozen(body));
  }

  /** A document selected from the file: never taken as absent (another writer may have added it). */
  private read(id: string): ViewDocument | undefined {
    this.absent.delete(id);
    return this.get(id);
  }

  private remember(doc: ViewDocument): ViewDocument {
    this.absent.delete(doc._id);
    this.cache.delete(doc._id);
    this.cache.set(doc._id, doc);
    if (this.cache.size > CACHED_DOCUMENTS) this.cache.delete(this.cache.keys().next().value!);
    return doc;
  }

  get size(): number {
    return this.documents;
  }

  find(query: PreparedFilter, options: FindOptions): ViewDocument[] {
    this.write();
    const sort = options.sort && Object.keys(options.sort).length > 0 ? options.sort : null;
    const skip = Math.max(0, options.skip ?? 0);
    const want = options.limit ? skip + options.limit : Infinity;
    const page = sort && want < Infinity ? this.table.page(query.filter, sort, skip, want, (id) => this.read(id)) : null;
    if (page) return page;
    const matched = this.table.matching(query, (id) => this.cache.get(id));
    const ordered = sort ? sortDocuments(matched, sort, want) : matched;
    return ordered.slice(skip, want);
  }

  count(query: PreparedFilter): number {
    this.write();
    return this.table.count(query, this.size, (id) => this.cache.get(id));
  }

  commit(documents: readonly ViewDocument[], checkpoint: LogPosition): void {
    if (this.bulk) return this.writeThrough(documents, checkpoint);
    // Checked first, kept after: a document that cannot be written leaves the commit out whole. A
    // document JSON would give back unchanged is kept as it is (frozen) and encoded once, when written.
    const changes: Array<{ doc: ViewDocument; before: ViewDocument | undefined }> = [];
    for (const doc of newestOf(documents)) {
      const before = this.get(doc._id);
      if (before && before._pos >= doc._pos) continue;
      changes.push({ doc: freezeJson(doc) ? doc : (parseFrozen(JSON.stringify(doc)) as ViewDocument), before });
    }
    for (const { doc, before } of changes) {
      this.pending.set(doc._id, doc);
      if (!before) this.documents++;
      this.remember(doc);
    }
    if (this.checkpoint === null || checkpoint > this.checkpoint) this.checkpoint = checkpoint;
    this.scheduleWrite();
  }

  /** A rebuild's commit: straight to the file (no key rows: they are made once, by `save`). */
  private writeThrough(documents: readonly ViewDocument[], checkpoint: LogPosition): void {
    let added = 0;
    const written: ViewDocument[] = [];
    this.db
      .transaction(() => {
        for (const doc of newestOf(documents)) {
          const before = this.get(doc._id);
          if (before && before._pos >= doc._pos) continue;
          const body = JSON.stringify(doc);
          this.statements.upsert.run(doc._id, body);
          if (!before) added++;
          written.push(parseFrozen(body));
        }
        if (this.checkpoint === null || checkpoint > this.checkpoint) this.statements.saveCheckpoint.run(checkpoint);
        this.statements.saveDocuments.run(this.documents + added);
      })
      .immediate();
    if (this.checkpoint === null || checkpoint > this.checkpoint) this.checkpoint = this.savedCheckpoint = checkpoint;
    this.documents += added;
    for (const doc of written) this.remember(doc);
  }

  /**
   * Has everything committed written to the file, and waits for it (blocking the event loop: a
   * query's selections read the file); throws if the write fails (what it held stays pending).
   */
  write(): void {
    this.clearWriteTimer();
    if (this.inFlight) this.writeThread.waitFor(this.inFlight.seq, this.db.name);
    if (!this.unwritten()) return;
    const seq = this.sendOrRetry();
    this.writeThread.waitFor(seq, this.db.name);
    if (this.lastWriteError !== null) throw new Error(this.lastWriteError);
  }

  /** Writes everything committed, then empties the file's WAL of earlier copies of its pages; false while another connection keeps it busy. */
  discardReplaced(): boolean {
    this.write();
    return truncateWal(this.db);
  }

  /** Whether the file is behind what is committed (documents, or a checkpoint that moved without any). */
  private unwritten(): boolean {
    return this.pending.size > 0 || this.checkpoint !== this.savedCheckpoint;
  }

  /** Sends what is pending to the write thread (nothing else may be under way): their JSON made here, the rest there. */
  private send(): number {
    const docs = this.pending;
    const ids: string[] = [];
    const bodies: string[] = [];
    for (const [id, doc] of docs) {
      ids.push(id);
      bodies.push(JSON.stringify(doc));
    }
    const checkpoint = this.checkpoint;
    const seq = this.writeThread.write(
      this.db.name,
      this.table.keys.fields,
      { ids, bodies, checkpoint, documents: this.documents },
      (error) => this.written(docs, checkpoint, error),
    );
    this.pending = new Map();
    this.inFlight = { seq, docs, checkpoint };
    // What is found nowhere is known only until the next write: another writer of the file (a second
    // store on the folder) may have added it since.
    this.absent.clear();
    return seq;
  }

  /** `send`; when the thread cannot be started or reached, everything stays pending and is tried again later (and the error thrown). */
  private sendOrRetry(): number {
    try {
      return this.send();
    } catch (error) {
      this.saveFailing = { since: this.saveFailing?.since ?? Date.now(), error: error instanceof Error ? error.message : String(error) };
      this.scheduleWrite();
      throw error;
    }
  }

  /** A write's answer: done, or failed (its documents pending again unless committed again since); the next is scheduled. */
  private written(docs: Map<string, ViewDocument>, checkpoint: LogPosition | null, error: string | null): void {
    this.inFlight = null;
    this.lastWriteError = error;
    if (error === null) {
      this.savedCheckpoint = checkpoint;
      this.saveFailing = null;
    } else {
      for (const [id, doc] of docs) if (!this.pending.has(id)) this.pending.set(id, doc);
      this.saveFailing = { since: this.saveFailing?.since ?? Date.now(), error };
    }
    if (this.unwritten() && this.db.open) this.scheduleWrite();
  }

  private scheduleWrite(): void {
    if (this.writeTimer) return;
    this.writeTimer = setTimeout(() => {
      this.writeTimer = null;
      // A write under way schedules the next when answered. One that fails (busy: a rebuild in
      // another process; a full disk) is tried again; reads are served from the pending documents
      // meanwhile, and the health check reports writes that keep failing.
      if (!this.db.open || this.inFlight || !this.unwritten()) return;
      try {
        this.sendOrRetry();
      } catch {
        // reported by `saveFailing`, tried again
      }
    }, this.writeDelayMs).unref();
  }

  private clearWriteTimer(): void {
    if (this.writeTimer) clearTimeout(this.writeTimer);
    this.writeTimer = null;
  }

  /**
   * Writes what is pending. A rebuild's generation gets its keys table and is made durable here
   * (WAL and `synchronous=NORMAL` from now on, its file synced), before it is activated.
   */
  save(): void {
    if (!this.bulk) return this.write();
    this.db.transaction(() => this.table.rekey())();
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('cache_size = -2000');
    const fd = openSync(this.db.name, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.bulk = false;
  }

  close(): void {
    try {
      if (this.db.open) this.write();
    } catch {
      // Busy or a full disk: what was not written is replayed from the log on restart.
    }
    this.clearWriteTimer();
    this.absent.clear();
    try {
      this.writeThread.release(this.db.name);
    } catch {
      // Not answered: the thread closes the file once its write is done.
    }
    this.cache.clear();
    this.db.close();
  }
}

/** The latest of each document in a commit (a batch may hold several versions of one). */
function newestOf(documents: readonly ViewDocument[]): Iterable<ViewDocument> {
  const newest = new Map<string, ViewDocument>();
  for (const doc of documents) {
    const seen = newest.get(doc._id);
    if (!seen || doc._pos >= seen._pos) newest.set(doc._id, doc);
  }
  return newest.values();
}
