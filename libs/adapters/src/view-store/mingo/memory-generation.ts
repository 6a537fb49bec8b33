import { FindOptions, freezeJson, LogPosition, ViewDocument } from '@deals/kernel';
import Database from 'better-sqlite3';
import { truncateWal } from '../../sqlite/open-durable-database';
import { WalCheckpointer } from '../../sqlite/wal-checkpointer';
import { CollectionIndex } from './collection-index';
import { checkpointOnFile, FileStatements, fileStatements, GENERATION_TABLES } from './generation-files';
import { parseFrozen } from './parse-frozen';
import { count, find, PreparedFilter } from './query-planner';
import type { Change } from './sorted-index';

/** How long a generation's writes may stay in memory only, by what is waiting to be saved. */
export interface SaveDelays {
  /** Documents (with their checkpoint). */
  documentsMs: number;
  /** A checkpoint that moved without documents; also the wait before a failed save is tried again. */
  checkpointMs: number;
  /** How long saves may keep failing (a full disk) before `ping`, so the health check, reports it. */
  failingReportMs: number;
}

const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
/** SQLite's own default: a commit checkpoints once the WAL holds this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Documents put into memory (and its indexes) at once as a generation loads. */
const LOAD_BATCH = 1000;

/**
 * One generation of one collection, held in memory and mirrored to its own SQLite file. Commits
 * change memory at once; the file is brought up to date a little later (`SaveDelays`), in one
 * transaction that writes each changed document once, however many commits changed it, together
 * with the checkpoint they reached. A hot document (a deal selling hundreds of units a second)
 * so costs one row write per save instead of one per commit. A crash loses at most the writes
 * since the last save, and never splits documents from their checkpoint: a restart replays them
 * from the log.
 */
export class MemoryGeneration {
  readonly docs = new Map<string, ViewDocument>();
  checkpoint: LogPosition | null;
  /**
   * Documents changed since the last save, by id (the latest of each), encoded only when saved: a
   * document that changes several times between saves (a hot deal, a purchase as it is paid) is
   * encoded once. They are frozen JSON values, so what is encoded is what was committed.
   */
  private readonly unsaved = new Map<string, ViewDocument>();
  private savedCheckpoint: LogPosition | null;
  private saveTimer: NodeJS.Timeout | null = null;
  private saveDue = Infinity;
  /** Since when the file has not been brought up to date, and why; null while saves succeed. */
  saveFailing: { since: number; error: string } | null = null;
  private readonly statements: FileStatements;

  /** Ends the checkpointer's watch of this file (set while it checkpoints the file). */
  private unwatch: (() => void) | null = null;

  constructor(
    readonly collection: string,
    readonly name: string,
    private readonly db: Database.Database,
    readonly index: CollectionIndex,
    private readonly delays: SaveDelays,
    checkpointer: WalCheckpointer,
    load: 'now' | 'later' = 'now',
  ) {
    db.exec(GENERATION_TABLES);
    this.statements = fileStatements(db);
    // Writes from here on leave a keys table (a rebuild's, see DiskGeneration) behind: it is marked stale.
    db.exec("DELETE FROM meta WHERE key = 'keyed_fields'");
    // The checkpoint before the documents: what another process (a CLI command) commits while they
    // are read in pages is then at most replayed again from the log, never skipped.
    this.checkpoint = checkpointOnFile(db);
    if (load === 'now') this.loadAll();
    this.savedCheckpoint = this.checkpoint;
    // The saves then commit without checkpoints (see WalCheckpointer); handed back, they checkpoint again.
    this.unwatch = checkpointer.watch(db.name, () => {
      this.unwatch = null;
      if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    });
    if (this.unwatch) db.pragma('wal_autocheckpoint = 0');
    // A burst (a rebuild's first save) may grow the WAL far; once reused it is cut back to this.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  }

  /**
   * Loads every document of the file, a page of rows at a time: the JSON text of each page dies
   * young, where reading all the rows first made a large catalogue's text survive into the old
   * space, whose first collection after a start stalled the process.
   */
  private loadAll(): void {
    for (const rows of this.pages(LOAD_BATCH)) this.put(rows.map(([, , body]) => parseFrozen(body)));
  }

  /** The file's rows (`[rowid, id, body]`) in rowid order, `size` at a time, each page read when asked for. */
  private *pages(size: number): Generator<Array<[number, string, string]>> {
    const page = this.db.prepare('SELECT rowid, id, body FROM docs WHERE rowid > ? ORDER BY rowid LIMIT ?').raw();
    for (let after = Number.MIN_SAFE_INTEGER; ;) {
      const rows = page.all(after, size) as Array<[number, string, string]>;
      if (rows.length === 0) return;
      yield rows;
      after = rows[rows.length - 1][0];
    }
  }

  /**
   * Loads the file's documents (a generation opened with `load: 'later'`) a slice at a time,
   * yielding to the event loop between slices: a rebuilt catalogue taken over by a serving process
   * must not hold its requests up for the whole load. A document `previous` (the generation this
   * one replaces) holds with the same JSON is taken from it, not parsed: a rebuild mostly writes
   * the documents again as they were, and a second copy of each would double the heap's old
   * space, whose collections then stall the process.
   */
  async loadInSlices(previous?: MemoryGeneration, slice = 100): Promise<void> {
    for (const rows of this.pages(slice)) {
      this.put(rows.map(([, id, body]) => previous?.holding(id, body) ?? parseFrozen(body)));
      await yieldToEventLoop();
    }
  }

  /**
   * Builds the sorted indexes that `other` (the generation this one replaces) has built, in steps,
   * yielding between them: the first list after the switch would otherwise build them all while
   * its caller waits.
   */
  async buildSortedLike(other: MemoryGeneration): Promise<void> {
    const step = async () => {
      await yieldToEventLoop();
      if (!this.db.open) throw new Error(`generation ${this.name} was closed while it loaded`);
    };
    for (const [field, index] of other.index.sorted) {
      if (index.built) await this.index.sorted.get(field)?.buildInSteps(step);
    }
  }

  get(id: string): ViewDocument | undefined {
    return this.docs.get(id);
  }

  /** The document held under `id` if its JSON is exactly `body` (documents are frozen: it can be shared). */
  holding(id: string, body: string): ViewDocument | undefined {
    const doc = this.docs.get(id);
    return doc && JSON.stringify(doc) === body ? doc : undefined;
  }

  get size(): number {
    return this.docs.size;
  }

  find(query: PreparedFilter, options: FindOptions): ViewDocument[] {
    return find(this.index, query, options);
  }

  count(query: PreparedFilter): number {
    return count(this.index, query);
  }

  commit(documents: readonly ViewDocument[], checkpoint: LogPosition): void {
    const fresh = documents.filter((doc) => {
      const stored = this.docs.get(doc._id);
      return !stored || stored._pos < doc._pos;
    });
    const advance = this.checkpoint === null || checkpoint > this.checkpoint;
    if (fresh.length > 0) {
      const kept = fresh.map((doc) => (freezeJson(doc) ? doc : parseFrozen(JSON.stringify(doc))));
      this.put(kept);
      for (const doc of kept) this.unsaved.set(doc._id, doc);
    }
    if (advance) this.checkpoint = checkpoint;
    if (this.unsaved.size > 0) this.scheduleSave(this.delays.documentsMs);
    else if (this.checkpoint !== this.savedCheckpoint) this.scheduleSave(this.delays.checkpointMs);
  }

  /** Writes what memory holds beyond the file, in one transaction; throws if it cannot. */
  save(): void {
    this.clearSaveTimer();
    if (this.unsaved.size === 0 && this.checkpoint === this.savedCheckpoint) return;
    const checkpoint = this.checkpoint;
    this.db
      .transaction(() => {
        for (const [id, doc] of this.unsaved) this.statements.upsert.run(id, JSON.stringify(doc));
        if (checkpoint !== null) this.statements.saveCheckpoint.run(checkpoint);
        // Memory holds every document of the file (loaded whole before any save), so its count is the file's.
        this.statements.saveDocuments.run(this.docs.size);
      })
      .immediate();
    this.unsaved.clear();
    this.savedCheckpoint = checkpoint;
    this.saveFailing = null;
  }

  /** Saves what memory holds beyond the file, then empties the file's WAL of earlier copies of its pages. */
  discardReplaced(): boolean {
    this.save();
    return truncateWal(this.db);
  }

  close(): void {
    try {
      if (this.db.open) this.save();
    } catch {
      // Busy (a rebuild in another process): what was not saved is replayed from the log on restart.
    }
    this.clearSaveTimer();
    this.unwatch?.();
    this.unwatch = null;
    this.db.close();
  }

  private scheduleSave(delayMs: number): void {
    const due = Date.now() + delayMs;
    if (due >= this.saveDue) return;
    this.clearSaveTimer();
    this.saveDue = due;
    this.saveTimer = setTimeout(() => {
      this.clearSaveTimer();
      try {
        if (this.db.open) this.save();
      } catch (error) {
        // Busy (a rebuild in another process), or a full disk: try again later; memory keeps
        // serving readers, and the health check reports saves that keep failing.
        this.saveFailing = { since: this.saveFailing?.since ?? Date.now(), error: error instanceof Error ? error.message : String(error) };
        this.scheduleSave(this.delays.checkpointMs);
      }
    }, delayMs).unref();
  }

  private clearSaveTimer(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    this.saveDue = Infinity;
  }

  /**
   * Memory holds exactly what a restart would load: the projection's own document when JSON gives
   * it back unchanged (frozen by `freezeJson`), else the document parsed from its JSON. All frozen.
   */
  private put(docs: ViewDocument[]): void {
    // A batch may write one id twice; the last write wins, as in the table.
    const changes = new Map<string, Omit<Change, 'slot'>>();
    for (const doc of docs) {
      changes.set(doc._id, { before: changes.get(doc._id)?.before ?? this.docs.get(doc._id), after: doc });
    }
    this.index.apply([...changes.values()]);
    for (const { after } of changes.values()) this.docs.set(after._id, after);
  }
}
