import { CONNECT_TIMEOUT_MS, servicePool, sessionClient } from '../../postgres-pool';
import {
  CheckpointListener,
  FindOptions,
  IndexSpec,
  LogPosition,
  PENDING_POSITION,
  RebuildTarget,
  ViewBatch,
  ViewDocument,
  ViewFilter,
  ViewStore,
  ViewWriter,
} from '@deals/kernel';
import DataLoader from 'dataloader';
import { Query } from 'mingo';
import { createHash, randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { geoContext } from '../mingo/geo-within.operator';
import { sortDocuments } from '../mingo/sort-order';
import { LEASE_TABLES, PostgresViewLeases } from './postgres-view-leases';

const FIRST_GENERATION = 'g1';
const POLL_MS = 500;
/** Readers in other processes switch within one poll; the old generation outlives that. */
const DROP_DELAY_MS = 4 * POLL_MS;
/** How long a rebuilt generation's index may take to build (millions of documents), against every other statement's few seconds. */
const INDEX_TIMEOUT_MS = 3_600_000;

/** The channel every commit notifies with the checkpoints it reached (see {@link CheckpointNotice}). */
const CHANNEL = 'deals_views';
/** PostgreSQL refuses a payload of 8000 bytes or more; a longer notice says "read the checkpoints" (an empty payload). */
const MAX_PAYLOAD = 7900;

/** A commit's notice: the positions reached, each with the generations (`collection@generation`) that reached it. */
type CheckpointNotice = Array<{ p: LogPosition; c: string[] }>;

const META = `
CREATE TABLE IF NOT EXISTS view_generations (collection text PRIMARY KEY, generation text NOT NULL);
CREATE TABLE IF NOT EXISTS view_checkpoints (name text PRIMARY KEY, position text NOT NULL);
CREATE OR REPLACE FUNCTION deals_view_keys(doc jsonb, fields text[]) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT coalesce(jsonb_object_agg(f, doc -> f), '{}'::jsonb) FROM unnest(fields) AS f WHERE doc ? f $$;
${LEASE_TABLES}`;

/** Look-ups by id read in one statement, at most. */
const MAX_LOOKUPS = 500;

/** One look-up by id: the active generation's table when it was asked. */
interface ByIdKey {
  table: string;
  id: string;
}

const NAME = /^[a-z0-9_]{1,40}$/;
/** The table of one generation of one collection (names checked: they go into SQL as identifiers). */
function table(collection: string, generation: string): string {
  if (!NAME.test(collection) || !NAME.test(generation))
    throw new Error(`view collection ${collection}/${generation}: not a name for a table`);
  return `"view__${collection}__${generation}"`;
}

const isScalar = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

/**
 * The SQL conditions a filter implies, with their parameters: for each top-level field compared to
 * a scalar (or `$in` scalars), "the field is that value, or an array holding it" (MongoDB's equality),
 * as JSONB containment: on the collection's indexed fields (see {@link CollectionKeys}), which its
 * GIN index answers, for the fields it does not index on the whole document. Every document the filter
 * matches satisfies them; what else the filter says is decided by mingo over what they select
 * (docs/decisions.md "PostgreSQL adapters").
 */
function pushdown(filter: ViewFilter, params: unknown[], keys: CollectionKeys): string[] {
  const where: string[] = [];
  const equal = (key: string, value: string | number | boolean) => {
    params.push(JSON.stringify({ [key]: value }), JSON.stringify({ [key]: [value] }));
    const of = keys.fields.includes(key) ? keys.expression : 'doc';
    return `(${of} @> $${params.length - 1}::jsonb OR ${of} @> $${params.length}::jsonb)`;
  };
  for (const [key, condition] of Object.entries(filter)) {
    if (key.startsWith('$') || key.includes('.')) continue;
    if (isScalar(condition)) where.push(equal(key, condition));
    else if (condition && typeof condition === 'object' && !Array.isArray(condition)) {
      const ops = condition as Record<string, unknown>;
      const keys = Object.keys(ops);
      if (keys.includes('$eq') && isScalar(ops.$eq)) where.push(equal(key, ops.$eq));
      if (keys.includes('$in') && Array.isArray(ops.$in) && ops.$in.length > 0 && ops.$in.every(isScalar))
        where.push(`(${(ops.$in as Array<string | number | boolean>).map((v) => equal(key, v)).join(' OR ')})`);
      if (keys.includes('$in') && Array.isArray(ops.$in) && ops.$in.length === 0) where.push('false');
    }
  }
  return where;
}

interface Row {
  doc: ViewDocument;
}

const FIELD = /^[A-Za-z0-9_]{1,64}$/;

/**
 * What a collection's GIN index holds: the top-level fields its declared indexes name (a dotted or
 * geographic key is left to mingo), as one JSONB object of those fields, not the whole document, so
 * that each write indexes a few values instead of every value of the document.
 */
interface CollectionKeys {
  fields: string[];
  /** The SQL expression of that object, the same in the index and in the queries. */
  expression: string;
}

function collectionKeys(indexes: IndexSpec[]): CollectionKeys {
  const fields = new Set<string>();
  for (const index of indexes)
    for (const [key, kind] of Object.entries(index.keys)) if (kind !== '2dsphere' && key !== '_id' && FIELD.test(key)) fields.add(key);
  const sorted = [...fields].sort();
  // deals_view_keys (made with the store's tables): the document's fields named, an immutable function an index can use.
  return { fields: sorted, expression: `deals_view_keys(doc, '{${sorted.join(',')}}'::text[])` };
}

const NO_KEYS: CollectionKeys = { fields: [], expression: 'doc' };

/** The index of `keys` on a table: named by both, so that another set of fields is another index. */
const keysIndex = (name: string, keys: CollectionKeys): string =>
  `"vk_${createHash('sha256').update(`${name} ${keys.expression}`).digest('hex').slice(0, 24)}"`;

/** Documents in the order of their ids: every writer locks a table's rows in this order (no deadlock between writers). */
function byId(documents: Iterable<ViewDocument>): ViewDocument[] {
  return [...documents].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
}

/** Keeps in `newest` each id's document of the highest position (a statement may write a row once). */
function keepNewest(newest: Map<string, ViewDocument>, documents: Iterable<ViewDocument>): void {
  for (const doc of documents) {
    const seen = newest.get(doc._id);
    if (!seen || doc._pos > seen._pos) newest.set(doc._id, doc);
  }
}

/**
 * An insert of `docs` into table `name`, each over a stored row only when newer (replaying changes
 * nothing), its rows selected `where` given; `param` numbers the statement's parameters.
 */
function upsertNewer(name: string, docs: readonly ViewDocument[], param: (value: unknown) => string, where = ''): string {
  return upsertRows(
    name,
    `SELECT * FROM unnest(${param(docs.map((d) => d._id))}::text[], ${param(docs.map((d) => d._pos))}::text[], ${param(docs.map((d) => JSON.stringify(d)))}::jsonb[])${where}`,
  );
}

/**
 * The (id, pos, doc) rows of `docs` sent as one JSON array, for a rebuild's large commits: one
 * text to write and to parse instead of three arrays whose every document is escaped as an element.
 */
const wholeRows = (docs: readonly ViewDocument[], param: (value: unknown) => string): string =>
  `SELECT d->>'_id', d->>'_pos', d FROM jsonb_array_elements(${param(JSON.stringify(docs))}::jsonb) AS d`;

/** An insert into table `name` of the (id, pos, doc) rows `rows` selects, each over a stored row only when newer. */
const upsertRows = (name: string, rows: string): string =>
  `INSERT INTO ${name} AS t (id, pos, doc)
           ${rows}
           ON CONFLICT (id) DO UPDATE SET pos = EXCLUDED.pos, doc = EXCLUDED.doc WHERE t.pos < EXCLUDED.pos`;

/** Documents an append writes in its own transaction, each with the number of the append's unit in its statement. */
export type InlineDocuments = ReadonlyArray<{ collection: string; documents: ReadonlyArray<{ unit: number; doc: ViewDocument }> }>;

/** The clauses of a statement that writes {@link InlineDocuments} (see {@link PostgresViewStore.inlineWrites}). */
export interface InlineWrites {
  /** Data-modifying WITH clauses (`name AS (...)`), one a collection. */
  clauses: string[];
  /** A condition: every collection's generation is the one its readers use. */
  current: string;
}

/**
 * The read side on PostgreSQL (`DATABASE_URL`): one table per generation of a collection, a
 * document per row (`id`, `pos`, `doc` as JSONB) with a GIN index on the documents, the active
 * generation in `view_generations` and each generation's checkpoint in `view_checkpoints`. A
 * commit, of one collection or of several (`commitAll`), is one statement, so one transaction: its
 * documents (position-guarded upserts: replaying changes nothing), its checkpoints (never back) and
 * a notice on {@link CHANNEL} of the checkpoints reached, which `onCheckpoints` listeners in every
 * process hear through one LISTEN connection a process. Queries run the filter's top-level
 * equalities in SQL and the whole filter, sort, skip and limit with mingo over the rows they
 * select, so both view stores answer every query alike.
 */
export class PostgresViewStore extends ViewStore {
  readonly backend = 'postgresql';
  override readonly tellsOfCheckpoints = true;
  private readonly pool: Pool;
  private ready: Promise<void> | null = null;
  private closed = false;
  private readonly active = new Map<string, string>();
  private readonly listeners = new Set<(collection: string) => void>();
  private readonly pendingDrops = new Set<Promise<void>>();
  private readonly retired = new Set<string>();
  /** The tables of this process's rebuilds not yet activated: no reader waits on their checkpoints, so no notice tells them. */
  private readonly building = new Set<string>();
  /** The last of the rebuilt generations' index builds, which run one after another. */
  private indexing: Promise<void> = Promise.resolve();
  private readonly poller: NodeJS.Timeout;
  private epoch = 0;
  private polling = false;
  private readonly checkpointListeners = new Set<CheckpointListener>();
  /** The LISTEN connection, while some listener is registered. */
  private listening: Client | null = null;
  private readonly byId: DataLoader<ByIdKey, ViewDocument | null>;
  /** Each defined collection's indexed fields. */
  private readonly keys = new Map<string, CollectionKeys>();

  private viewLeases: PostgresViewLeases | null = null;
  /** Documents to write ahead of their fold, waiting for the next write (`writeAhead`). */
  private readonly ahead: Array<{
    batches: ReadonlyArray<{ collection: string; documents: readonly ViewDocument[] }>;
    done: (written: boolean) => void;
    failed: (error: unknown) => void;
  }> = [];
  private writingAhead = false;

  constructor(private readonly url: string) {
    super();
    // Small, as the event store's: replicas, a worker and a CLI share the server's connections.
    this.pool = servicePool(url, 6);
    this.poller = setInterval(() => void this.poll(), POLL_MS).unref();
    this.byId = new DataLoader((keys) => this.readByIds(keys), { cache: false, maxBatchSize: MAX_LOOKUPS });
  }

  private meta(): Promise<void> {
    this.ready ??= this.pool
      .query<{ made: boolean }>(
        `SELECT to_regclass('view_checkpoints') IS NOT NULL AND to_regprocedure('deals_view_keys(jsonb,text[])') IS NOT NULL
                AND to_regclass('view_leases') IS NOT NULL AS made`,
      )
      .then(async ({ rows }) => {
        if (!rows[0].made) await this.pool.query(`SELECT pg_advisory_xact_lock(7216003); ${META}`);
      })
      .catch((error) => {
        this.ready = null;
        throw error;
      });
    return this.ready;
  }

  async define(collection: string, indexes: IndexSpec[]): Promise<void> {
    this.keys.set(collection, collectionKeys(indexes));
    await this.meta();
    const found = await this.pool.query<{ generation: string }>(
      `INSERT INTO view_generations (collection, generation) VALUES ($1, $2)
       ON CONFLICT (collection) DO UPDATE SET generation = view_generations.generation RETURNING generation`,
      [collection, FIRST_GENERATION],
    );
    const generation = found.rows[0].generation;
    await this.createTable(collection, generation);
    const cached = this.active.get(collection);
    if (cached !== undefined && cached !== generation) this.switchTo(collection, generation);
    else this.active.set(collection, generation);
  }

  /**
   * Makes the generation's table and its index of the collection's keys, where missing; a table
   * made before its index held only the keys loses its index of the whole document. Looked for
   * first: DDL on an existing table takes its lock, and would wait behind every write in flight.
   * Without `indexed`, the table alone: a rebuild fills it first and indexes it once, as it
   * activates it ({@link indexTable}), instead of updating the index at every write.
   */
  private async createTable(collection: string, generation: string, { indexed = true }: { indexed?: boolean } = {}): Promise<void> {
    const name = table(collection, generation);
    const keys = this.keysOf(collection);
    const index = keysIndex(name, keys);
    const whole = `"view__${collection}__${generation}__doc"`;
    const found = await this.pool.query<{ made: boolean; indexed: boolean; whole: boolean }>(
      `SELECT to_regclass($1) IS NOT NULL AS made, to_regclass($2) IS NOT NULL AS indexed, to_regclass($3) IS NOT NULL AS whole`,
      [name, index, whole],
    );
    const { made, indexed: hasIndex, whole: wholeIndexed } = found.rows[0];
    if (made && (hasIndex || keys.fields.length === 0 || !indexed) && !wholeIndexed) return;
    await this.pool.query(
      `SELECT pg_advisory_xact_lock(7216003);
       CREATE TABLE IF NOT EXISTS ${name} (id text PRIMARY KEY, pos text NOT NULL, doc jsonb NOT NULL);
       ${indexed ? this.indexStatement(collection, generation) : ''}
       DROP INDEX IF EXISTS ${whole};`,
    );
  }

  /**
   * Runs a rebuilt generation's index statement, one at a time a process, on a connection of its
   * own that may wait {@link INDEX_TIMEOUT_MS} for it (the pool's bound is for statements of a request).
   */
  private buildIndex(statement: string): Promise<void> {
    if (!statement) return Promise.resolve();
    const built = this.indexing.then(async () => {
      const client = new Client({
        connectionString: this.url,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        query_timeout: INDEX_TIMEOUT_MS,
      });
      client.on('error', () => undefined);
      await client.connect();
      try {
        await client.query(statement);
      } finally {
        await client.end().catch(() => undefined);
      }
    });
    this.indexing = built.catch(() => undefined);
    return built;
  }

  /** The statement making the index of the collection's keys on a generation's table, where missing (none for a collection without keys). */
  private indexStatement(collection: string, generation: string): string {
    const name = table(collection, generation);
    const keys = this.keysOf(collection);
    return keys.fields.length
      ? `CREATE INDEX IF NOT EXISTS ${keysIndex(name, keys)} ON ${name} USING gin ((${keys.expression}) jsonb_path_ops);`
      : '';
  }

  private keysOf(collection: string): CollectionKeys {
    return this.keys.get(collection) ?? NO_KEYS;
  }

  async findById<T extends ViewDocument>(collection: string, id: string): Promise<T | null> {
    return (await this.byId.load({ table: this.live(collection), id })) as T | null;
  }

  /**
   * The documents of look-ups by id asked in one turn of the event loop, by every request at once,
   * read in one statement (one transaction instead of one a look-up): a table's ids together, the
   * tables joined with UNION ALL. Each look-up is asked after its own request's reasons to ask
   * (a wait for a view included), so it sees at least what it would have seen alone.
   */
  private async readByIds(keys: readonly ByIdKey[]): Promise<Array<ViewDocument | null>> {
    const tables = new Map<string, string[]>();
    for (const { table: name, id } of keys) {
      const ids = tables.get(name);
      if (ids) ids.push(id);
      else tables.set(name, [id]);
    }
    const names = [...tables.keys()];
    const index = new Map(names.map((name, i) => [name, i]));
    const found = await this.pool.query<Row & { t: number }>(
      names.map((name, i) => `SELECT ${i}::int AS t, doc FROM ${name} WHERE id = ANY($${i + 1}::text[])`).join(' UNION ALL '),
      names.map((name) => tables.get(name)),
    );
    const docs = new Map(found.rows.map((r) => [`${r.t}:${r.doc._id}`, r.doc]));
    return keys.map(({ table: name, id }) => docs.get(`${index.get(name)}:${id}`) ?? null);
  }

  async findByIds<T extends ViewDocument>(collection: string, ids: readonly string[]): Promise<T[]> {
    const name = this.live(collection);
    const docs = await this.byId.loadMany(ids.map((id) => ({ table: name, id })));
    return docs.flatMap((doc) => {
      if (doc instanceof Error) throw doc;
      return doc ? [doc as T] : [];
    });
  }

  async findOne<T extends ViewDocument>(collection: string, filter: ViewFilter): Promise<T | null> {
    return (await this.find<T>(collection, filter, { limit: 1 }))[0] ?? null;
  }

  async find<T extends ViewDocument>(collection: string, filter: ViewFilter, options: FindOptions = {}): Promise<T[]> {
    const matched = await this.matching<T>(collection, filter);
    const sorted = options.sort
      ? sortDocuments(matched, options.sort)
      : matched.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
    const skip = options.skip ?? 0;
    // A limit of 0 is no limit, as in MongoDB.
    return sorted.slice(skip, options.limit ? skip + options.limit : undefined);
  }

  async count(collection: string, filter: ViewFilter): Promise<number> {
    return (await this.matching(collection, filter)).length;
  }

  /** The documents the filter matches: SQL selects by its top-level equalities, mingo decides. */
  private async matching<T extends ViewDocument>(collection: string, filter: ViewFilter): Promise<T[]> {
    const params: unknown[] = [];
    const where = pushdown(filter, params, this.keysOf(collection));
    const found = await this.pool.query<Row>(
      `SELECT doc FROM ${this.live(collection)}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`,
      params,
    );
    const query = new Query(filter, { context: geoContext });
    return found.rows.map((r) => r.doc as T).filter((doc) => query.test(doc as unknown as Record<string, unknown>));
  }

  writer(collection: string): ViewWriter {
    return this.generationWriter(collection, this.generationOf(collection));
  }

  async beginRebuild(collection: string): Promise<RebuildTarget> {
    this.generationOf(collection);
    const generation = `g${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    await this.createTable(collection, generation, { indexed: false });
    this.building.add(table(collection, generation));
    let state: 'open' | 'activated' | 'abandoned' = 'open';
    let indexed: Promise<void> | null = null;
    const complete = (): Promise<void> => (indexed ??= this.buildIndex(this.indexStatement(collection, generation)));
    const settle = (next: typeof state) => {
      if (state !== 'open') throw new Error(`rebuild ${collection}/${generation} was already ${state}`);
      state = next;
    };
    return {
      ...this.generationWriter(collection, generation),
      complete,
      activate: async () => {
        await complete();
        settle('activated');
        this.building.delete(table(collection, generation));
        this.epoch++;
        const before = await this.pool.query<{ generation: string }>(
          `UPDATE view_generations SET generation = $2 WHERE collection = $1
           RETURNING (SELECT generation FROM view_generations WHERE collection = $1) AS generation`,
          [collection, generation],
        );
        this.switchTo(collection, generation);
        const old = before.rows[0]?.generation;
        if (old && old !== generation) this.dropLater(collection, old);
      },
      abandon: async () => {
        settle('abandoned');
        this.building.delete(table(collection, generation));
        await this.dropGeneration(collection, generation);
      },
    };
  }

  async status(): Promise<
    Array<{ collection: string; generation: string; checkpoint: LogPosition | null; documents: number; bytes: number }>
  > {
    return Promise.all(
      [...this.active].map(async ([collection, generation]) => {
        const [checkpoint, counted] = await Promise.all([
          this.checkpointOf(table(collection, generation)),
          this.pool.query<{ n: string; bytes: string }>(
            `SELECT count(*)::text AS n, pg_total_relation_size($1::regclass)::text AS bytes FROM ${table(collection, generation)}`,
            [table(collection, generation)],
          ),
        ]);
        return { collection, generation, checkpoint, documents: Number(counted.rows[0].n), bytes: Number(counted.rows[0].bytes) };
      }),
    );
  }

  /**
   * One statement for all the batches (data-modifying WITH clauses: one transaction, one round
   * trip): each table's newest documents over older ones, every stored checkpoint forward, and the
   * notice of what each batch reached.
   */
  override async commitAll(batches: readonly ViewBatch[]): Promise<void> {
    await this.commitBatches(
      batches.map(({ writer, ...batch }) => ({ ...batch, collection: writer.collection, generation: writer.generation })),
    );
  }

  private async commitBatches(
    batches: ReadonlyArray<Omit<ViewBatch, 'writer'> & { collection: string; generation: string }>,
  ): Promise<void> {
    if (batches.length === 0) return;
    // By table: a statement may write a row once, so each id's newest document and each table's furthest checkpoint.
    const tables = new Map<string, { documents: Map<string, ViewDocument>; checkpoint: LogPosition | null }>();
    const notice = new Map<LogPosition, string[]>();
    for (const { collection, generation, documents, checkpoint, store } of batches) {
      const name = table(collection, generation);
      if (this.retired.has(name)) throw new Error(`generation ${generation} of ${collection} was replaced; write to the active one`);
      let entry = tables.get(name);
      if (!entry) tables.set(name, (entry = { documents: new Map(), checkpoint: null }));
      keepNewest(entry.documents, documents);
      if (store !== false && (entry.checkpoint === null || checkpoint > entry.checkpoint)) entry.checkpoint = checkpoint;
      if (!this.building.has(name)) notice.set(checkpoint, [...(notice.get(checkpoint) ?? []), `${collection}@${generation}`]);
    }
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    const clauses: string[] = [];
    for (const [name, { documents }] of tables) {
      if (documents.size === 0) continue;
      const rows = this.building.has(name) ? wholeRows(byId(documents.values()), param) : undefined;
      clauses.push(`d${clauses.length} AS (${rows ? upsertRows(name, rows) : upsertNewer(name, byId(documents.values()), param)})`);
    }
    const checkpoints = [...tables].filter(([, entry]) => entry.checkpoint !== null);
    if (checkpoints.length)
      clauses.push(
        `c AS (INSERT INTO view_checkpoints AS c (name, position)
           SELECT * FROM unnest(${param(checkpoints.map(([name]) => name))}::text[], ${param(checkpoints.map(([, e]) => e.checkpoint))}::text[])
           ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position WHERE c.position < EXCLUDED.position)`,
      );
    const payload = JSON.stringify([...notice].map(([p, c]) => ({ p, c })) satisfies CheckpointNotice);
    const told = notice.size ? `pg_notify('${CHANNEL}', ${param(payload.length <= MAX_PAYLOAD ? payload : '')})` : 'true';
    await this.pool.query(`${clauses.length ? `WITH ${clauses.join(',\n')}\n` : ''}SELECT ${told}`, params);
  }

  /**
   * Calls made in one turn of the loop (and while a write is out) are written together: a statement
   * (a transaction) a collection, in the order the calls name them, each table's rows in the order
   * of their ids, as a commit locks them. It never holds one table's rows while it waits for
   * another's, so it cannot deadlock with the worker committing the same documents. Position-guarded
   * as a commit's, with no checkpoint and no notice. False for a collection not defined here, or
   * whose generation another process has replaced since this one last looked (a rebuild).
   */
  override writeAhead(batches: ReadonlyArray<{ collection: string; documents: readonly ViewDocument[] }>): Promise<boolean> {
    if (batches.some(({ collection }) => !this.active.has(collection))) return Promise.resolve(false);
    return new Promise((resolve, reject) => {
      this.ahead.push({ batches, done: resolve, failed: reject });
      if (!this.writingAhead) {
        this.writingAhead = true;
        setImmediate(() => void this.flushAhead());
      }
    });
  }

  /**
   * The clauses that write `views` within another statement of the same database (an append's, so
   * in its transaction): each collection's documents into the generation this process reads, those
   * folded from events not yet written (at `PENDING_POSITION`) stamped with their unit's position as
   * relation `positions` (`u`, `pos`) gives it, the others at their own (a unit with no row there
   * writes nothing), each over a stored one only when newer, a table's rows in the order of their
   * ids; none into a generation another process has replaced meanwhile (`current` is then false).
   * Null when a collection is not defined here.
   */
  inlineWrites(views: InlineDocuments, param: (value: unknown) => string, positions: string): InlineWrites | null {
    if (views.some(({ collection }) => !this.active.has(collection))) return null;
    const clauses: string[] = [];
    const current: string[] = [];
    for (const { collection, documents } of views) {
      const generation = this.active.get(collection)!;
      const docs = [...new Map(documents.map((d) => [d.doc._id, d])).values()].sort((a, b) =>
        a.doc._id < b.doc._id ? -1 : a.doc._id > b.doc._id ? 1 : 0,
      );
      const isCurrent = `coalesce((SELECT generation = ${param(generation)} FROM view_generations WHERE collection = ${param(collection)}), false)`;
      current.push(isCurrent);
      clauses.push(
        `v${clauses.length} AS (${upsertRows(
          table(collection, generation),
          `SELECT d.id, CASE WHEN d.stamp THEN p.pos ELSE d.doc ->> '_pos' END,
                  CASE WHEN d.stamp THEN jsonb_set(d.doc, '{_pos}', to_jsonb(p.pos)) ELSE d.doc END
             FROM unnest(${param(docs.map((d) => d.doc._id))}::text[], ${param(docs.map((d) => d.unit))}::int[], ${param(docs.map((d) => JSON.stringify(d.doc)))}::jsonb[],
                         ${param(docs.map((d) => d.doc._pos === PENDING_POSITION))}::bool[])
                  WITH ORDINALITY AS d(id, u, doc, stamp, n)
             JOIN ${positions} AS p ON p.u = d.u
            WHERE ${isCurrent}
            ORDER BY d.n`,
        )})`,
      );
    }
    return { clauses, current: current.join(' AND ') };
  }

  private async flushAhead(): Promise<void> {
    try {
      while (this.ahead.length) {
        const calls = this.ahead.splice(0);
        // Each collection's newest document of each id, collections in the order first named.
        const tables = new Map<string, Map<string, ViewDocument>>();
        for (const { batches } of calls)
          for (const { collection, documents } of batches) {
            let docs = tables.get(collection);
            if (!docs) tables.set(collection, (docs = new Map()));
            keepNewest(docs, documents);
          }
        try {
          let written = true;
          for (const [collection, documents] of tables) {
            if (documents.size === 0) continue;
            const generation = this.active.get(collection)!;
            const params: unknown[] = [collection, generation];
            const param = (value: unknown) => `$${params.push(value)}`;
            // Only into the generation readers use: one another process (a rebuild) has just
            // replaced would hold them where no one reads; the caller then waits for the fold.
            const { rows } = await this.pool.query<{ current: boolean }>(
              `WITH g AS (SELECT generation = $2 AS current FROM view_generations WHERE collection = $1),
               w AS (${upsertNewer(table(collection, generation), byId(documents.values()), param, ' WHERE (SELECT current FROM g)')})
               SELECT coalesce((SELECT current FROM g), false) AS current`,
              params,
            );
            if (!rows[0].current) written = false;
          }
          if (!written) void this.poll();
          for (const call of calls) call.done(written);
        } catch (error) {
          for (const call of calls) call.failed(error);
        }
      }
    } finally {
      this.writingAhead = false;
    }
  }

  override leases(): PostgresViewLeases {
    return (this.viewLeases ??= new PostgresViewLeases(this.pool, () => this.meta()));
  }

  override onCheckpoints(listener: CheckpointListener): () => void {
    this.checkpointListeners.add(listener);
    if (this.listening) listener.resync();
    else void this.listen();
    return () => {
      this.checkpointListeners.delete(listener);
    };
  }

  /**
   * Opens the LISTEN connection (one for the process's listeners), then tells them to read the
   * checkpoints: what was committed before it listened is in no notice. Lost, it is opened again
   * on the next poll.
   */
  private async listen(): Promise<void> {
    if (this.listening || this.closed || this.checkpointListeners.size === 0) return;
    const client = sessionClient(this.url);
    this.listening = client;
    const lost = () => {
      if (this.listening === client) this.listening = null;
      void client.end().catch(() => undefined);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', ({ payload }) => this.heard(payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch {
      lost();
      return;
    }
    if (this.listening !== client) return;
    for (const listener of this.checkpointListeners) listener.resync();
  }

  /** Tells the listeners what a notice says of the generations this process reads. */
  private heard(payload: string | undefined): void {
    let notice: CheckpointNotice;
    try {
      notice = payload ? (JSON.parse(payload) as CheckpointNotice) : [];
    } catch {
      notice = [];
    }
    if (notice.length === 0) {
      for (const listener of this.checkpointListeners) listener.resync();
      return;
    }
    for (const { p, c } of notice)
      for (const named of c) {
        const at = named.lastIndexOf('@');
        const collection = named.slice(0, at);
        if (this.active.get(collection) !== named.slice(at + 1)) continue;
        for (const listener of this.checkpointListeners) listener.reached(collection, p);
      }
  }

  onGenerationSwitch(listener: (collection: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    // Closing twice is closing once.
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.poller);
    const listening = this.listening;
    this.listening = null;
    await listening?.end().catch(() => undefined);
    await Promise.all(this.pendingDrops);
    await this.pool.end();
  }

  private generationOf(collection: string): string {
    const generation = this.active.get(collection);
    if (!generation) throw new Error(`view collection ${collection} is not defined; call define() first`);
    return generation;
  }

  private live(collection: string): string {
    return table(collection, this.generationOf(collection));
  }

  private async checkpointOf(name: string): Promise<LogPosition | null> {
    const found = await this.pool.query<{ position: string }>('SELECT position FROM view_checkpoints WHERE name = $1', [name]);
    return found.rows[0]?.position ?? null;
  }

  private generationWriter(collection: string, generation: string): ViewWriter {
    const name = table(collection, generation);
    return {
      collection,
      generation,
      getMany: async <T extends ViewDocument>(ids: string[]) => {
        // With the other look-ups of the turn (a page's other views'), in one statement.
        const docs = await this.byId.loadMany(ids.map((id) => ({ table: name, id })));
        const found = new Map<string, T>();
        for (const doc of docs) {
          if (doc instanceof Error) throw doc;
          if (doc) found.set(doc._id, doc as T);
        }
        return found;
      },
      commit: async <T extends ViewDocument>(documents: readonly T[], checkpoint: LogPosition) => {
        await this.commitBatches([{ collection, generation, documents, checkpoint }]);
      },
      checkpoint: () => this.checkpointOf(name),
    };
  }

  private switchTo(collection: string, generation: string): void {
    const previous = this.active.get(collection);
    if (previous && previous !== generation) this.retired.add(table(collection, previous));
    this.active.set(collection, generation);
    this.epoch++;
    for (const listener of this.listeners) {
      try {
        listener(collection);
      } catch {
        // one failing listener must not keep the others from hearing of the switch
      }
    }
  }

  private async poll(): Promise<void> {
    if (!this.listening && this.checkpointListeners.size) void this.listen();
    if (this.polling || this.active.size === 0) return;
    this.polling = true;
    const epoch = this.epoch;
    try {
      const found = await this.pool.query<{ collection: string; generation: string }>(
        'SELECT collection, generation FROM view_generations WHERE collection = ANY($1::text[])',
        [[...this.active.keys()]],
      );
      if (epoch !== this.epoch) return;
      for (const { collection, generation } of found.rows) {
        if (this.active.get(collection) !== generation) this.switchTo(collection, generation);
      }
    } catch {
      // A missed poll is retried on the next tick.
    } finally {
      this.polling = false;
    }
  }

  private dropLater(collection: string, generation: string): void {
    const drop: Promise<void> = new Promise<void>((resolve) => setTimeout(resolve, DROP_DELAY_MS))
      .then(() => this.dropGeneration(collection, generation))
      .catch(() => undefined)
      .finally(() => this.pendingDrops.delete(drop));
    this.pendingDrops.add(drop);
  }

  private async dropGeneration(collection: string, generation: string): Promise<void> {
    const name = table(collection, generation);
    await this.pool.query(`DROP TABLE IF EXISTS ${name}`);
    await this.pool.query('DELETE FROM view_checkpoints WHERE name = $1', [name]);
  }
}
