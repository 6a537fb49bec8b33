import { DefineOptions, FindOptions, IndexSpec, RebuildTarget, ViewDocument, ViewFilter, ViewStore, ViewWriter } from '@deals/kernel';
import { mkdirSync } from 'node:fs';
import { openDurableDatabase } from '../../sqlite/open-durable-database';
import { viewCheckpointer, WalCheckpointer } from '../../sqlite/wal-checkpointer';
import { CollectionIndex } from './collection-index';
import { DiskGeneration } from './disk-generation';
import { GenerationFiles } from './generation-files';
import { MemoryGeneration, SaveDelays } from './memory-generation';
import { CompiledFilters } from './query-planner';

const DEFAULT_SAVE_DELAYS: SaveDelays = { documentsMs: 250, checkpointMs: 1000, failingReportMs: 30_000 };

/** A generation as the store uses it: in memory (`MemoryGeneration`) or on disk (`DiskGeneration`). */
type Generation = MemoryGeneration | DiskGeneration;

const WATCH_MS = 250;
/** How often, and how far apart, `discardReplaced` tries a file whose WAL another connection keeps busy. */
const DISCARD_ATTEMPTS = 20;
const DISCARD_WAIT_MS = 50;

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
  private readonly queries = new CompiledFilters();
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
    return this.generation(collection).find(this.queries.prepared(filter), options) as T[];
  }

  async count(collection: string, filter: ViewFilter): Promise<number> {
    return this.generation(collection).count(this.queries.prepared(filter));
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
      bytes: this.files.bytesOnDisk(g.collection, g.name),
    }));
    return [...loaded, ...[...this.unopened].map((collection) => this.files.statusOnFile(collection))];
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
