import { ViewDocument, ViewFilter } from '@deals/kernel';
import DataLoader from 'dataloader';
import { Query } from 'mingo';
import { Pool } from 'pg';
import { geoContext } from '../mingo/geo-within.operator';
import type { CollectionKeys } from './postgres-view-tables';

/** Look-ups by id read in one statement, at most. */
const MAX_LOOKUPS = 500;

/** One look-up by id: the active generation's table when it was asked. */
interface ByIdKey {
  table: string;
  id: string;
}

interface Row {
  doc: ViewDocument;
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

/** The documents the filter matches in a table: SQL selects by its top-level equalities, mingo decides. */
export async function matching<T extends ViewDocument>(pool: Pool, name: string, keys: CollectionKeys, filter: ViewFilter): Promise<T[]> {
  const params: unknown[] = [];
  const where = pushdown(filter, params, keys);
  const found = await pool.query<Row>(`SELECT doc FROM ${name}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`, params);
  const query = new Query(filter, { context: geoContext });
  return found.rows.map((r) => r.doc as T).filter((doc) => query.test(doc as unknown as Record<string, unknown>));
}

/**
 * Look-ups by id asked in one turn of the event loop, by every request at once, read in one
 * statement (one transaction instead of one a look-up): a table's ids together, the tables joined
 * with UNION ALL. Each look-up is asked after its own request's reasons to ask (a wait for a view
 * included), so it sees at least what it would have seen alone.
 */
export class LookupsById {
  private readonly loader: DataLoader<ByIdKey, ViewDocument | null>;

  constructor(private readonly pool: Pool) {
    this.loader = new DataLoader((keys) => this.read(keys), { cache: false, maxBatchSize: MAX_LOOKUPS });
  }

  load(table: string, id: string): Promise<ViewDocument | null> {
    return this.loader.load({ table, id });
  }

  /** The documents found, in the order of `ids`. */
  async loadMany(table: string, ids: readonly string[]): Promise<ViewDocument[]> {
    const docs = await this.loader.loadMany(ids.map((id) => ({ table, id })));
    return docs.flatMap((doc) => {
      if (doc instanceof Error) throw doc;
      return doc ? [doc] : [];
    });
  }

  private async read(keys: readonly ByIdKey[]): Promise<Array<ViewDocument | null>> {
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
}
