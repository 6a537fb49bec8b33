import {
  DefineOptions,
  FindOptions,
  freezeJson,
  IndexSpec,
  LogPosition,
  RebuildTarget,
  ViewDocument,
  ViewFilter,
  ViewStore,
  ViewWriter,
} from '@deals/kernel';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { openDurableDatabase, truncateWal } from '../../sqlite/open-durable-database';
import { viewCheckpointer, WalCheckpointer } from '../../sqlite/wal-checkpointer';
import { CollectionIndex } from './collection-index';
import { documentsOnFile, GenerationFiles, saveDocumentCount } from './generation-files';
import { CompiledFilter, compileFilter } from './predicate-compiler';
import { count, find, PreparedFilter } from './query-planner';
import { DiskGeneration } from './disk-generation';
import { parseFrozen } from './parse-frozen';
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

const DEFAULT_SAVE_DELAYS: SaveDelays = { documentsMs: 250, checkpointMs: 1000, failingReportMs: 30_000 };

/**
 * One generation of one collection, held in memory and mirrored to its own SQLite file. Commits
 * change memory at once; the file is brought up to date a little later (`SaveDelays`), in one
 * transaction that writes each changed document once, however many commits changed it, together
 * with the checkpoint they reached. A hot document (a deal selling hundreds of units a second)
 * so costs one row write per save instead of one per commit. A crash loses at most the writes
 * since the last save, and never splits documents from their checkpoint: a restart replays them
 * from the log.
 */
class MemoryGeneration {
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
  private readonly upsert: Database.Statement;
  private readonly saveCheckpoint: Database.Statement;
  private readonly saveDocuments: Database.Statement;

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
    db.exec('CREATE TABLE IF NOT EXISTS docs (id TEXT PRIMARY KEY, body TEXT NOT NULL)');
    db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    // Writes from here on leave a keys table (a rebuild's, see DiskGeneration) behind: it is marked stale.
    db.exec("DELETE FROM meta WHERE key = 'keyed_fields'");
    this.upsert = db.prepare('INSERT INTO docs (id, body) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body');
    this.saveCheckpoint = db.prepare(
      "INSERT INTO meta (key, value) VALUES ('checkpoint', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
    this.saveDocuments = saveDocumentCount(db);
    // The checkpoint before the documents: what another process (a CLI command) commits while they
    // are read in pages is then at most replayed again from the log, never skipped.
    this.checkpoint = (db.prepare("SELECT value FROM meta WHERE key = 'checkpoint'").pluck().get() as string | undefined) ?? null;
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
        for (const [id, doc] of this.unsaved) this.upsert.run(id, JSON.stringify(doc));
        if (checkpoint !== null) this.saveCheckpoint.run(checkpoint);
        // Memory holds every document of the file (loaded whole before any save), so its count is the file's.
        this.saveDocuments.run(this.docs.size);
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

/** A generation as the store uses it: in memory (`MemoryGeneration`) or on disk (`DiskGeneration`). */
type Generation = MemoryGeneration | DiskGeneration;

/** JSON loses what tells some filters apart: regular expressions, dates, NaN and infinities, undefined. */
function cacheable(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof RegExp) return { $__regex: [raw.source, raw.flags] };
  if (raw instanceof Date) return { $__date: raw.getTime() };
  if (typeof raw === 'number' && !Number.isFinite(raw)) return { $__number: String(raw) };
  return value === undefined ? { $__undefined: true } : value;
}

const WATCH_MS = 250;
/** How often, and how far apart, `discardReplaced` tries a file whose WAL another connection keeps busy. */
const DISCARD_ATTEMPTS = 20;
const DISCARD_WAIT_MS = 50;

const QUERY_CACHE_LIMIT = 1000;

/**
 * The embedded read side: every collection lives in memory and is queried in the MongoDB query
 * language (plus `$geoWithin`). The indexes its projection declared narrow a query to candidates
 * or give its order (query-planner.ts); filters compile to plain functions, with mingo answering
 * the conditions the compiler leaves out (predicate-compiler.ts). Each generation is mirrored to a
 * SQLite file together with its checkpoint, in one transaction, so a restart resumes where it
 * stopped; the mirror follows memory within `SaveDelays` (and at close, and before a rebuilt
 * generation is activated). Views can always be rebuilt from the log, so their files use
 * `synchronous=NORMAL`: a crash may lose the last commits of a view, never its consistency with its
 * checkpoint. Documents handed out are deeply frozen; readers copy before changing.
 */
export class MingoViewStore extends ViewStore {
  readonly backend = 'in-process';
  override readonly inProcess = true;
  private readonly files: GenerationFiles;
  private readonly active = new Map<string, Generation>();
  private readonly indexes = new Map<string, IndexSpec[]>();
  private readonly listeners = new Set<(collection: string) => void>();
  private readonly queries = new Map<string, CompiledFilter>();
  private readonly watcher: NodeJS.Timeout;

  private readonly saveDelays: SaveDelays;
  /** Newly activated generations being loaded (see `followSwitches`), by collection. */
  private readonly loading = new Map<string, MemoryGeneration>();
  private closing = false;
  /** Collections defined with `keepInMemory`. */
  private readonly inMemory = new Set<string>();
  /** Collections defined and not yet loaded (with `openOnFirstUse`). */
  private readonly unopened = new Set<string>();

  /**
   * `checkpointer`: where the files' WAL is checkpointed (the process's one thread unless a test
   * gives its own). `openOnFirstUse`: load a collection into memory when it is first read or
   * written, not when it is defined (the CLI, whose commands use a few views or none, and whose
   * `status` reads the files). `residence`: every collection in memory, or (`as-defined`, the
   * service's) only those defined with `keepInMemory`, the others on disk.
   */
  constructor(
    dir: string,
    saveDelays: Partial<SaveDelays> = {},
    private readonly checkpointer: WalCheckpointer = viewCheckpointer,
    private readonly openOnFirstUse = false,
    private readonly residence: 'memory' | 'as-defined' = 'memory',
  ) {
    super();
    this.saveDelays = { ...DEFAULT_SAVE_DELAYS, ...saveDelays };
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.files = new GenerationFiles(dir);
    this.watcher = setInterval(() => this.followSwitches(), WATCH_MS).unref();
  }

  async define(collection: string, indexes: IndexSpec[], options: DefineOptions = {}): Promise<void> {
    this.indexes.set(collection, indexes);
    if (options.keepInMemory) this.inMemory.add(collection);
    if (this.active.has(collection)) return;
    if (this.openOnFirstUse) this.unopened.add(collection);
    else this.openActive(collection);
  }

  private openActive(collection: string): Generation {
    this.unopened.delete(collection);
    this.files.removeStale(collection);
    const generation = this.open(collection, this.files.active(collection));
    this.active.set(collection, generation);
    return generation;
  }

  async findById<T extends ViewDocument>(collection: string, id: string): Promise<T | null> {
    return (this.generation(collection).get(id) as T | undefined) ?? null;
  }

  async findByIds<T extends ViewDocument>(collection: string, ids: readonly string[]): Promise<T[]> {
    const generation = this.generation(collection);
    const found: T[] = [];
    for (const id of ids) {
      const doc = generation.get(id);
      if (doc) found.push(doc as T);
    }
    return found;
  }

  async findOne<T extends ViewDocument>(collection: string, filter: ViewFilter): Promise<T | null> {
    return (await this.find<T>(collection, filter, { limit: 1 }))[0] ?? null;
  }

  async find<T extends ViewDocument>(collection: string, filter: ViewFilter, options: FindOptions = {}): Promise<T[]> {
    return this.generation(collection).find(this.prepared(filter), options) as T[];
  }

  async count(collection: string, filter: ViewFilter): Promise<number> {
    return this.generation(collection).count(this.prepared(filter));
  }

  writer(collection: string): ViewWriter {
    return this.writerFor(this.generation(collection));
  }

  async beginRebuild(collection: string): Promise<RebuildTarget> {
    // The CLI writes every rebuilt generation straight to its file, whatever the collection's residence: it reads none of them.
    const generation = this.open(collection, GenerationFiles.fresh(), 'now', this.openOnFirstUse ? 'disk' : undefined, true);
    return {
      ...this.writerFor(generation),
      activate: async () => {
        // Another process (the API, when the CLI rebuilds) loads the generation from its file.
        generation.save();
        this.files.activate(collection, generation.name);
        this.switchTo(collection, generation);
      },
      abandon: async () => {
        generation.close();
        await this.removeWhenReleased(collection, generation.name);
      },
    };
  }

  async status() {
    const loaded = [...this.active.values()].map((g) => ({
      collection: g.collection,
      generation: g.name,
      checkpoint: g.checkpoint,
      documents: g.size,
      bytes: this.bytesOnDisk(g.collection, g.name),
    }));
    return [...loaded, ...[...this.unopened].map((collection) => this.statusOnFile(collection))];
  }

  /** What a generation's file and its WAL take on disk (0 when not written yet). */
  private bytesOnDisk(collection: string, generation: string): number {
    const file = this.files.file(collection, generation);
    return [file, `${file}-wal`].reduce((n, path) => n + (existsSync(path) ? statSync(path).size : 0), 0);
  }

  /** A collection's status read from its active file, without loading its documents. */
  private statusOnFile(collection: string): {
    collection: string;
    generation: string;
    checkpoint: LogPosition | null;
    documents: number;
    bytes: number;
  } {
    const generation = this.files.active(collection);
    const file = this.files.file(collection, generation);
    if (!existsSync(file)) return { collection, generation, checkpoint: null, documents: 0, bytes: 0 };
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
      const documents = tables.has('docs') && tables.has('meta') ? documentsOnFile(db) : 0;
      const checkpoint = tables.has('meta')
        ? ((db.prepare("SELECT value FROM meta WHERE key = 'checkpoint'").pluck().get() as string | undefined) ?? null)
        : null;
      return { collection, generation, checkpoint, documents, bytes: this.bytesOnDisk(collection, generation) };
    } finally {
      db.close();
    }
  }

  onGenerationSwitch(listener: (collection: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Fails while a collection's saves have kept failing for `failingReportMs` (reads still work). */
  async ping(): Promise<void> {
    const now = Date.now();
    const failing = [...this.active.values()].filter((g) => g.saveFailing && now - g.saveFailing.since >= this.saveDelays.failingReportMs);
    if (failing.length === 0) return;
    throw new Error(
      failing
        .map(
          (g) =>
            `view ${g.collection} not saved to its file for ${Math.round((now - g.saveFailing!.since) / 1000)} s (${g.saveFailing!.error})`,
        )
        .join('; ') + ': reads are served from memory; a restart now would replay the log from the last save',
    );
  }

  /**
   * Every file's documents written, then its WAL checkpointed and cut to nothing: with
   * `secure_delete`, the database file holds no replaced or deleted document, and the WAL was where
   * its earlier versions stayed until a checkpoint reused them. Tried again while another
   * connection (a reader, the CLI) keeps a file busy. A call waits for the run under way, then
   * shares the next one: erasures asked in a burst checkpoint the files once or twice, not once each.
   */
  override discardReplaced(): Promise<void> {
    this.nextDiscard ??= this.lastDiscard
      .catch(() => undefined)
      .then(() => {
        this.nextDiscard = null;
        return this.discardEvery();
      });
    this.lastDiscard = this.nextDiscard;
    return this.nextDiscard;
  }

  private lastDiscard: Promise<void> = Promise.resolve();
  private nextDiscard: Promise<void> | null = null;

  private async discardEvery(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      // The views served and those being built (a rebuild's) alike.
      const generations = [...this.active.values(), ...this.loading.values()];
      const busy = generations.filter((generation) => !generation.discardReplaced());
      if (busy.length === 0) return;
      if (attempt === DISCARD_ATTEMPTS)
        throw new Error(
          `${busy.map((g) => g.collection).join(', ')}: the write-ahead log stayed busy; its earlier copies go at its next checkpoint`,
        );
      await new Promise((resolve) => setTimeout(resolve, DISCARD_WAIT_MS));
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.watcher);
    // A generation still loading stops at its next step (its file is closed) and is not switched to.
    for (const generation of [...this.active.values(), ...this.loading.values()]) generation.close();
    this.active.clear();
    // The checkpointer's connections to these files are closed too once this resolves.
    await this.checkpointer.settled();
  }

  /** `rebuild`: the generation a rebuild fills (written in bulk when on disk: see DiskGeneration). */
  private open(collection: string, name: string, load: 'now' | 'later' = 'now', residence?: 'disk', rebuild = false): Generation {
    const firstKeys = (this.indexes.get(collection) ?? []).map((spec) => Object.entries(spec.keys)[0]);
    const fields = firstKeys.filter(([, kind]) => kind !== '2dsphere').map(([field]) => field);
    const geoFields = firstKeys.filter(([, kind]) => kind === '2dsphere').map(([field]) => field);
    const db = openDurableDatabase(this.files.file(collection, name), 'normal');
    // A document replaced or deleted leaves no copy behind, in its page or a freed one (a user's erased profile among them).
    db.pragma('secure_delete = ON');
    if (residence === 'disk' || (this.residence === 'as-defined' && !this.inMemory.has(collection)))
      return new DiskGeneration(collection, name, db, fields, rebuild, this.saveDelays.documentsMs);
    return new MemoryGeneration(collection, name, db, new CollectionIndex(fields, geoFields), this.saveDelays, this.checkpointer, load);
  }

  private generation(collection: string): Generation {
    const generation = this.active.get(collection) ?? (this.unopened.has(collection) ? this.openActive(collection) : undefined);
    if (!generation) throw new Error(`view collection ${collection} is not defined`);
    return generation;
  }

  private writerFor(generation: Generation): ViewWriter {
    return {
      collection: generation.collection,
      generation: generation.name,
      getMany: async <T extends ViewDocument>(ids: string[]) => {
        const found = new Map<string, T>();
        for (const id of ids) {
          const doc = generation.get(id);
          if (doc) found.set(id, doc as T);
        }
        return found;
      },
      commit: async (documents, checkpoint) => generation.commit(documents, checkpoint),
      checkpoint: async () => generation.checkpoint,
      save: async () => generation.save(),
    };
  }

  /** The filter compiled, once per distinct filter (compiled tests keep no reference to the caller's object). */
  private prepared(filter: ViewFilter): PreparedFilter {
    const key = JSON.stringify(filter, cacheable);
    let compiled = this.queries.get(key);
    if (!compiled) {
      if (this.queries.size >= QUERY_CACHE_LIMIT) this.queries.clear();
      compiled = compileFilter(filter);
      this.queries.set(key, compiled);
    }
    return { filter, compiled };
  }

  private switchTo(collection: string, generation: Generation): void {
    const previous = this.active.get(collection);
    this.active.set(collection, generation);
    if (previous && previous !== generation) {
      previous.close();
      // A file that cannot be removed now is a stale generation, removed at the next start.
      this.removeWhenReleased(collection, previous.name).catch(() => undefined);
    }
    for (const listener of this.listeners) listener(collection);
  }

  /**
   * Removes a closed generation's files once the checkpointer's thread has closed its connection to
   * them. Removed before, a checkpoint of that connection could create the WAL and shared-memory
   * files again under their names (SQLite opens them by name when it first needs them), and they
   * would stay until the thread got round to closing it. Files left by a process that stops first
   * are stale generations, removed at the next start.
   */
  private async removeWhenReleased(collection: string, generation: string): Promise<void> {
    await this.checkpointer.settled();
    await this.files.remove(collection, generation);
  }

  /**
   * Takes over generations that another process (the CLI's rebuild) activated: a generation on
   * disk at once, one held in memory once loaded in slices (the old one serves meanwhile).
   */
  private followSwitches(): void {
    for (const [collection, generation] of this.active) {
      const name = this.files.active(collection);
      if (name === generation.name || this.loading.has(collection)) continue;
      const next = this.open(collection, name, 'later');
      if (!(next instanceof MemoryGeneration)) {
        this.switchTo(collection, next);
        continue;
      }
      this.loading.set(collection, next);
      next
        .loadInSlices(generation instanceof MemoryGeneration ? generation : undefined)
        .then(() => (generation instanceof MemoryGeneration ? next.buildSortedLike(generation) : undefined))
        .then(() => {
          if (this.active.get(collection) === generation && !this.closing) this.switchTo(collection, next);
          else next.close();
        })
        .catch(() => next.close())
        .finally(() => this.loading.delete(collection));
    }
  }
}
