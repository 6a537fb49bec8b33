import { CONNECT_TIMEOUT_MS } from '../../postgres-pool';
import { IndexSpec } from '@deals/kernel';
import { createHash } from 'node:crypto';
import { Client, Pool } from 'pg';
import { LEASE_TABLES } from './postgres-view-leases';

/** How long a rebuilt generation's index may take to build (millions of documents), against every other statement's few seconds. */
const INDEX_TIMEOUT_MS = 3_600_000;

/** The lock that makes the store's tables one process at a time. */
const TABLES_LOCK = 7216003;

const META = `
CREATE TABLE IF NOT EXISTS view_generations (collection text PRIMARY KEY, generation text NOT NULL);
CREATE TABLE IF NOT EXISTS view_checkpoints (name text PRIMARY KEY, position text NOT NULL);
CREATE OR REPLACE FUNCTION deals_view_keys(doc jsonb, fields text[]) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT coalesce(jsonb_object_agg(f, doc -> f), '{}'::jsonb) FROM unnest(fields) AS f WHERE doc ? f $$;
${LEASE_TABLES}`;

const NAME = /^[a-z0-9_]{1,40}$/;
/** The table of one generation of one collection (names checked: they go into SQL as identifiers). */
export function table(collection: string, generation: string): string {
  if (!NAME.test(collection) || !NAME.test(generation))
    throw new Error(`view collection ${collection}/${generation}: not a name for a table`);
  return `"view__${collection}__${generation}"`;
}

const FIELD = /^[A-Za-z0-9_]{1,64}$/;

/**
 * What a collection's GIN index holds: the top-level fields its declared indexes name (a dotted or
 * geographic key is left to mingo), as one JSONB object of those fields, not the whole document, so
 * that each write indexes a few values instead of every value of the document.
 */
export interface CollectionKeys {
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

/**
 * The view store's tables: `view_generations` (each collection's active generation),
 * `view_checkpoints` (each generation's), the leases', and a table a generation of a collection,
 * with a GIN index of the collection's keys.
 */
export class PostgresViewTables {
  private ready: Promise<void> | null = null;
  /** Each defined collection's indexed fields. */
  private readonly keys = new Map<string, CollectionKeys>();
  /** The last of the rebuilt generations' index builds, which run one after another. */
  private indexing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    private readonly url: string,
  ) {}

  /** Makes the tables shared by every collection, once. */
  meta(): Promise<void> {
    this.ready ??= this.pool
      .query<{ made: boolean }>(
        `SELECT to_regclass('view_checkpoints') IS NOT NULL AND to_regprocedure('deals_view_keys(jsonb,text[])') IS NOT NULL
                AND to_regclass('view_leases') IS NOT NULL AS made`,
      )
      .then(async ({ rows }) => {
        if (!rows[0].made) await this.pool.query(`SELECT pg_advisory_xact_lock(${TABLES_LOCK}); ${META}`);
      })
      .catch((error) => {
        this.ready = null;
        throw error;
      });
    return this.ready;
  }

  /** Keeps the fields a collection's indexes name. */
  define(collection: string, indexes: IndexSpec[]): void {
    this.keys.set(collection, collectionKeys(indexes));
  }

  keysOf(collection: string): CollectionKeys {
    return this.keys.get(collection) ?? NO_KEYS;
  }

  /**
   * Makes the generation's table and its index of the collection's keys, where missing; a table
   * made before its index held only the keys loses its index of the whole document. Looked for
   * first: DDL on an existing table takes its lock, and would wait behind every write in flight.
   * Without `indexed`, the table alone: a rebuild fills it first and indexes it once, as it
   * activates it ({@link buildIndex}), instead of updating the index at every write.
   */
  async create(collection: string, generation: string, { indexed = true }: { indexed?: boolean } = {}): Promise<void> {
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
      `SELECT pg_advisory_xact_lock(${TABLES_LOCK});
       CREATE TABLE IF NOT EXISTS ${name} (id text PRIMARY KEY, pos text NOT NULL, doc jsonb NOT NULL);
       ${indexed ? this.indexStatement(collection, generation) : ''}
       DROP INDEX IF EXISTS ${whole};`,
    );
  }

  /**
   * Makes a rebuilt generation's index, one at a time a process, on a connection of its own that
   * may wait {@link INDEX_TIMEOUT_MS} for it (the pool's bound is for statements of a request).
   */
  buildIndex(collection: string, generation: string): Promise<void> {
    const statement = this.indexStatement(collection, generation);
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

  /** Drops a generation's table and its checkpoint. */
  async drop(collection: string, generation: string): Promise<void> {
    const name = table(collection, generation);
    await this.pool.query(`DROP TABLE IF EXISTS ${name}`);
    await this.pool.query('DELETE FROM view_checkpoints WHERE name = $1', [name]);
  }

  /** The statement making the index of the collection's keys on a generation's table, where missing (none for a collection without keys). */
  private indexStatement(collection: string, generation: string): string {
    const name = table(collection, generation);
    const keys = this.keysOf(collection);
    return keys.fields.length
      ? `CREATE INDEX IF NOT EXISTS ${keysIndex(name, keys)} ON ${name} USING gin ((${keys.expression}) jsonb_path_ops);`
      : '';
  }
}
