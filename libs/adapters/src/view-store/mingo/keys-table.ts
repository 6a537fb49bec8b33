import type { SortSpec, ViewDocument, ViewFilter } from '@deals/kernel';
import type Database from 'better-sqlite3';
import { DocumentKeys, Key, keyOf } from './document-keys';
import { parseFrozen } from './parse-frozen';
import type { PreparedFilter } from './query-planner';
import { orderScalars } from './sort-order';

type Doc = Record<string, unknown>;

/**
 * The keys table's form, kept with its fields in `meta`: a file keyed in another form is keyed
 * again when opened. 2: `value` has no type affinity (declared BLOB), so a string that reads as a
 * number ('007') is kept as text and never equals the number 7 or the string '7'.
 */
const KEYS_TABLE_VERSION = 2;

/** The most values of an `$in` looked up in the keys table (SQLite binds at most 32,766 parameters). */
const IN_LIMIT = 10_000;

/** A field name that a JSON path names as it is (`$.name`). */
const SIMPLE_FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How many candidates a selection gives are counted, at most, to choose the narrowest. */
const ESTIMATE_LIMIT = 2000;

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

/**
 * A disk generation's `keys` table: the values of the fields its collection's indexes name, one row
 * per value (array elements each), made from the file's documents when the file is opened keyed for
 * other fields (and by a rebuild, once, as it saves), and the queries it answers: a filter's
 * equalities and number ranges select the candidates, and a sorted page is decided from the values
 * SQLite reads out of the stored JSON.
 */
export class KeysTable {
  constructor(
    private readonly db: Database.Database,
    readonly keys: DocumentKeys,
  ) {}

  /**
   * Makes the keys table (from the documents already in the file, once) when the file has none or
   * was keyed for other fields.
   */
  keyIfFieldsChanged(): void {
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
  rekey(): void {
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

  /** How many documents the filter matches, of the `all` the file holds. */
  count(query: PreparedFilter, all: number, cached: (id: string) => ViewDocument | undefined): number {
    const { selections: found, exact } = selections(query.filter, this.keys.fieldSet);
    if (exact && found.length === 0) return all;
    const plan = exact ? this.plan(found) : null;
    if (plan)
      return this.db
        .prepare(`SELECT count(*) FROM docs WHERE ${plan.where}`)
        .pluck()
        .get(...plan.params) as number;
    return this.matching(query, cached).length;
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
   * value is an array or an object, whose order only mingo decides. `read`: a document selected from
   * the file, by its id.
   */
  page(
    filter: ViewFilter,
    sort: SortSpec,
    skip: number,
    want: number,
    read: (id: string) => ViewDocument | undefined,
  ): ViewDocument[] | null {
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
      const doc = read(key._id);
      return doc ? [doc] : [];
    });
  }

  /**
   * The documents the filter matches, in id order: the candidates of its narrowest selection, or
   * every document when it has none, tested against the whole filter; `cached`: a document already
   * parsed, by its id.
   */
  matching(query: PreparedFilter, cached: (id: string) => ViewDocument | undefined): ViewDocument[] {
    const { selections: found } = selections(query.filter, this.keys.fieldSet);
    const narrowest = this.narrowest(found);
    const rows = this.db
      .prepare(`SELECT id, body FROM docs${narrowest ? ` WHERE id IN (${narrowest.sql})` : ''} ORDER BY id`)
      .raw()
      .iterate(...(narrowest?.params ?? [])) as IterableIterator<[string, string]>;
    const matched: ViewDocument[] = [];
    for (const [id, body] of rows) {
      const doc = cached(id) ?? parseFrozen(body);
      if (query.compiled.test(doc as never)) matched.push(doc);
    }
    return matched;
  }
}
