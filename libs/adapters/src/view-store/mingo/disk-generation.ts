import { FindOptions, freezeJson, LogPosition, SortSpec, ViewDocument, ViewFilter } from '@deals/kernel';
import { parseFrozen } from './parse-frozen';
import Database from 'better-sqlite3';
import { closeSync, fsyncSync, openSync } from 'node:fs';
import type { PreparedFilter } from './query-planner';
import { orderScalars, sortDocuments } from './sort-order';
import { documentsOnFile, saveDocumentCount } from './generation-files';
import { DocumentKeys, Key, keyOf } from './document-keys';
import { viewWriteThread, ViewWriteThread } from './view-write-thread';
import { truncateWal } from '../../sqlite/open-durable-database';

type Doc = Record<string, unknown>;

/**
 * The keys table's form, kept with its fields in `meta`: a file keyed in another form is keyed
 * again when opened. 2: `value` has no type affinity (declared BLOB), so a string that reads as a
 * number ('007') is kept as text and never equals the number 7 or the string '7'.
 */
const KEYS_TABLE_VERSION = 2;

/** Parsed documents kept per generation, most recently used last; as many ids known not to be on file. */
const CACHED_DOCUMENTS = 2000;

/**
 * A subquery selecting the ids of some documents, with its parameters; `has`, the same as a
 * condition on a row of `docs` (looked up by its id); `point`, whether it names values (an
 * equality, `$in`, ids), not a range.
 */
interface Selection {
  sql: string;
  params: unknown[];
  has: string;
  point: boolean;
}

/**
 * The subqueries that select candidates for a filter: for each top-level field the collection
 * indexes compared with a scalar, `$eq` or `$in` scalars, or number bounds, the documents holding
 * such a value there (as the value or an array element: MongoDB's equality and comparisons, each
 * bound on its own as MongoDB takes them on an array), from the keys table; for `_id`, the ids.
 * Every document the filter matches is in each of them; `exact` says whether they say all the
 * filter says.
 */
function selections(filter: ViewFilter, fields: ReadonlySet<string>): { selections: Selection[]; exact: boolean } {
  const found: Selection[] = [];
  let exact = true;
  const keys = (field: string, condition: string, values: unknown[], point = true) =>
    found.push({
      sql: `SELECT id FROM keys WHERE field = ? AND ${condition}`,
      params: [field, ...values],
      has: `EXISTS (SELECT 1 FROM keys WHERE field = ? AND ${condition} AND id = docs.id)`,
      point,
    });
  const translate = (field: string, condition: unknown): boolean => {
    if (field.startsWith('$')) return false;
    const ops = condition && typeof condition === 'object' && !Array.isArray(condition) ? Object.entries(condition as Doc) : null;
    if (field === '_id') {
      const ids = typeof condition === 'string' ? [condition] : ops?.length === 1 && ops[0][0] === '$in' ? ops[0][1] : null;
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) return false;
      const list = ids.map(() => '?').join(',') || 'NULL';
      found.push({ sql: `SELECT id FROM docs WHERE id IN (${list})`, params: ids, has: `docs.id IN (${list})`, point: true });
      return true;
    }
    if (!fields.has(field)) return false;
    const scalar = keyOf(condition);
    if (scalar) {
      keys(field, 'kind = ? AND value = ?', [...scalar]);
      return true;
    }
    if (!ops || ops.length === 0) return false;
    if (ops.length === 1 && ops[0][0] === '$eq' && keyOf(ops[0][1])) {
      keys(field, 'kind = ? AND value = ?', [...keyOf(ops[0][1])!]);
      return true;
    }
    if (ops.length === 1 && ops[0][0] === '$in' && Array.isArray(ops[0][1])) {
      const values = (ops[0][1] as unknown[]).map(keyOf);
      if (values.some((k) => k === null) || values.length > IN_LIMIT) return false;
      if (values.length === 0) found.push({ sql: 'SELECT NULL WHERE 0', params: [], has: '0', point: true });
      else {
        // One condition per kind (an OR per value passes SQLite's expression depth at 1,000).
        const byKind = new Map<Key[0], unknown[]>();
        for (const [kind, value] of values as Key[]) {
          const list = byKind.get(kind);
          if (list) list.push(value);
          else byKind.set(kind, [value]);
        }
        const kinds = [...byKind];
        keys(
          field,
          `(${kinds.map(([, list]) => `(kind = ? AND value IN (${list.map(() => '?').join(',')}))`).join(' OR ')})`,
          kinds.flatMap(([kind, list]) => [kind, ...list]),
        );
      }
      return true;
    }
    const bounds: Record<string, string> = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' };
    if (ops.every(([op, v]) => op in bounds && typeof v === 'number' && Number.isFinite(v))) {
      for (const [op, v] of ops) keys(field, `kind = 'n' AND value ${bounds[op]} ?`, [v], false);
      return true;
    }
    return false;
  };
  for (const [field, condition] of Object.entries(filter)) if (!translate(field, condition)) exact = false;
  return { selections: found, exact };
}

/** The page cache of a rebuild's generation, in KiB (SQLite's default is 2 MB). */
const BULK_CACHE_KIB = 32 * 1024;

/** The most values of an `$in` looked up in the keys table (SQLite binds at most 32,766 parameters). */
const IN_LIMIT = 10_000;

/** A field name that a JSON path names as it is (`$.name`). */
const SIMPLE_FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How many candidates a selection gives are counted, at most, to choose the narrowest. */
const ESTIMATE_LIMIT = 2000;

/**
 * One generation of a collection that lives on disk, not in memory: its documents in the
 * generation's SQLite file (`docs`, the same table the in-memory generations mirror to), and the
 * values of the fields its indexes name in a `keys` table (one row per value, array elements each),
 * which answers a query's equalities and number ranges. Queries read the candidates' documents and
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
  private readonly keys: DocumentKeys;
  private readonly statements: {
    get: Database.Statement;
    upsert: Database.Statement;
    saveCheckpoint: Database.Statement;
    saveDocuments: Database.Statement;
  };
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
    this.keys = new DocumentKeys(fields);
    db.exec('CREATE TABLE IF NOT EXISTS docs (id TEXT PRIMARY KEY, body TEXT NOT NULL)');
    db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    this.reindexIfFieldsChanged();
    this.statements = {
      get: db.prepare('SELECT body FROM docs WHERE id = ?').pluck(),
      upsert: db.prepare('INSERT INTO docs (id, body) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body'),
      saveCheckpoint: db.prepare(
        "INSERT INTO meta (key, value) VALUES ('checkpoint', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      ),
      saveDocuments: saveDocumentCount(db),
    };
    this.checkpoint = (db.prepare("SELECT value FROM meta WHERE key = 'checkpoint'").pluck().get() as string | undefined) ?? null;
    this.savedCheckpoint = this.checkpoint;
    this.documents = documentsOnFile(db);
  }

  /**
   * The keys table for the indexed fields: made (from the documents already in the file, once) when
   * the file has none or was keyed for other fields.
   */
  private reindexIfFieldsChanged(): void {
    const keyed = this.db.prepare("SELECT value FROM meta WHERE key = 'keyed_fields'").pluck();
    if (keyed.get() === this.keyedFields()) return;
    // Another process opening the file may be keying it too: the transaction takes the write lock
    // first (waiting for the other's), as a read turned write fails at once once the other has
    // written, and keys the file only if the other has not.
    this.db
      .transaction(() => {
        if (keyed.get() !== this.keyedFields()) this.rekey();
      })
      .immediate();
  }

  private keyedFields(): string {
    return JSON.stringify({ keys: KEYS_TABLE_VERSION, fields: [...this.keys.fieldSet].sort() });
  }

  /**
   * The keys table made anew from the documents: their keys gathered in a temporary table as they
   * come, then written in the table's order (a B-tree filled from one end, not at random places).
   */
  private rekey(): void {
    this.db.exec('DROP TABLE IF EXISTS keys');
    this.db.exec('DROP TABLE IF EXISTS temp.keys_gathered');
    this.db.exec('CREATE TEMP TABLE keys_gathered (field TEXT, kind TEXT, value BLOB, id TEXT)');
    const add = this.db.prepare('INSERT INTO temp.keys_gathered (field, kind, value, id) VALUES (?, ?, ?, ?)');
    // Read a page at a time: a connection runs no statement while another's rows are being read.
    const page = this.db.prepare('SELECT rowid, id, body FROM docs WHERE rowid > ? ORDER BY rowid LIMIT 1000').raw();
    for (let after = Number.MIN_SAFE_INTEGER; ;) {
      const rows = page.all(after) as Array<[number, string, string]>;
      if (rows.length === 0) break;
      for (const [, id, body] of rows)
        for (const [field, kind, value] of this.keys.of(JSON.parse(body) as object)) add.run(field, kind, value, id);
      after = rows[rows.length - 1][0];
    }
    this.db.exec(
      'CREATE TABLE keys (field TEXT NOT NULL, kind TEXT NOT NULL, value BLOB, id TEXT NOT NULL, PRIMARY KEY (field, kind, value, id)) WITHOUT ROWID',
    );
    this.db.exec('INSERT OR IGNORE INTO keys SELECT field, kind, value, id FROM temp.keys_gathered ORDER BY field, kind, value, id');
    this.db.exec('DROP TABLE temp.keys_gathered');
    this.db
      .prepare("INSERT INTO meta (key, value) VALUES ('keyed_fields', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
      .run(this.keyedFields());
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
    const page = sort && want < Infinity ? this.pageInSql(query.filter, sort, skip, want) : null;
    if (page) return page;
    const matched = this.matching(query);
    const ordered = sort ? sortDocuments(matched, sort, want) : matched;
    return ordered.slice(skip, want);
  }

  count(query: PreparedFilter): number {
    this.write();
    const { selections: found, exact } = selections(query.filter, this.keys.fieldSet);
    if (exact && found.length === 0) return this.size;
    const plan = exact ? this.plan(found) : null;
    if (plan)
      return this.db
        .prepare(`SELECT count(*) FROM docs WHERE ${plan.where}`)
        .pluck()
        .get(...plan.params) as number;
    return this.matching(query).length;
  }

  /** The selection with the fewest candidates, each counted up to {@link ESTIMATE_LIMIT}; null when there is none. */
  private narrowest(found: Selection[]): Selection | null {
    let narrowest: Selection | null = null;
    let fewest = Infinity;
    for (const selection of found) {
      const n =
        found.length === 1
          ? 0
          : (this.db
              .prepare(`SELECT count(*) FROM (${selection.sql} LIMIT ${ESTIMATE_LIMIT})`)
              .pluck()
              .get(...selection.params) as number);
      if (n < fewest) [narrowest, fewest] = [selection, n];
    }
    return narrowest;
  }

  /**
   * The narrowest of the selections, and the condition on `docs` that its candidates meet all of
   * them; null when another selection is a range (tested row by row, a range is read whole for each).
   */
  private plan(found: Selection[]): { narrowest: Selection; where: string; params: unknown[] } | null {
    const narrowest = this.narrowest(found);
    if (!narrowest) return null;
    const others = found.filter((s) => s !== narrowest);
    if (others.some((s) => !s.point)) return null;
    return {
      narrowest,
      where: [`docs.id IN (${narrowest.sql})`, ...others.map((s) => s.has)].join(' AND '),
      params: [...narrowest.params, ...others.flatMap((s) => s.params)],
    };
  }

  /**
   * A page of a sorted query decided without parsing every match: when the selections say all the
   * filter says and every sort field is a top-level field, SQLite selects the matches and reads
   * their sort values out of the stored JSON; the same ordering as in memory (`orderScalars`) picks
   * the page, and only its documents are parsed. Null (the caller reads every match) when a sort
   * value is an array or an object, whose order only mingo decides.
   */
  private pageInSql(filter: ViewFilter, sort: SortSpec, skip: number, want: number): ViewDocument[] | null {
    const fields = Object.keys(sort).filter((field) => field !== '_id');
    if (!fields.every((field) => SIMPLE_FIELD.test(field))) return null;
    const { selections: found, exact } = selections(filter, this.keys.fieldSet);
    if (!exact || found.length === 0) return null;
    const plan = this.plan(found);
    if (!plan) return null;
    const columns = fields.map((field) => `json_type(body, '$.${field}'), json_extract(body, '$.${field}')`).join(', ');
    const rows = this.db
      .prepare(`SELECT id${columns ? `, ${columns}` : ''} FROM docs WHERE ${plan.where}`)
      .raw()
      .all(...plan.params) as unknown[][];
    const keys: ViewDocument[] = [];
    for (const row of rows) {
      const doc: Doc = { _id: row[0] };
      for (let f = 0; f < fields.length; f++) {
        const type = row[1 + 2 * f] as string | null;
        if (type === 'array' || type === 'object') return null;
        const value = type === 'true' ? true : type === 'false' ? false : row[2 + 2 * f];
        // A lone surrogate comes back from SQLite's UTF-8 as U+FFFD: such a string is compared as parsed.
        if (typeof value === 'string' && value.includes('\ufffd')) return null;
        if (type !== null) doc[fields[f]] = value;
      }
      keys.push(doc as unknown as ViewDocument);
    }
    const ordered = orderScalars(keys, sort, want);
    if (!ordered) return null;
    return ordered.slice(skip, want).flatMap((key) => {
      // Selected from the file: never taken as absent (another writer may have added it).
      this.absent.delete(key._id);
      const doc = this.get(key._id);
      return doc ? [doc] : [];
    });
  }

  /**
   * The documents the filter matches, in id order: the candidates of its narrowest selection, or
   * every document when it has none, tested against the whole filter.
   */
  private matching(query: PreparedFilter): ViewDocument[] {
    const { selections: found } = selections(query.filter, this.keys.fieldSet);
    const narrowest = this.narrowest(found);
    const rows = this.db
      .prepare(`SELECT id, body FROM docs${narrowest ? ` WHERE id IN (${narrowest.sql})` : ''} ORDER BY id`)
      .raw()
      .iterate(...(narrowest?.params ?? [])) as IterableIterator<[string, string]>;
    const matched: ViewDocument[] = [];
    for (const [id, body] of rows) {
      const doc = this.cache.get(id) ?? parseFrozen(body);
      if (query.compiled.test(doc as never)) matched.push(doc);
    }
    return matched;
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
    const seq = this.writeThread.write(this.db.name, this.keys.fields, { ids, bodies, checkpoint, documents: this.documents }, (error) =>
      this.written(docs, checkpoint, error),
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
    this.db.transaction(() => this.rekey())();
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
