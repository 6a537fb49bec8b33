import { LogPosition, PENDING_POSITION, ViewBatch, ViewDocument } from '@deals/kernel';
import { Pool } from 'pg';
import type { InlineDocuments, InlineWrites } from '../../event-store/postgres/inline-views';
import { keepNewest, ServerGenerations } from '../server-generations';
import { notifyClause } from './postgres-view-notices';
import { table } from './postgres-view-tables';

/** Documents in the order of their ids: every writer locks a table's rows in this order (no deadlock between writers). */
export const compareIds = (a: ViewDocument, b: ViewDocument): number => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0);

const byId = (documents: Iterable<ViewDocument>): ViewDocument[] => [...documents].sort(compareIds);

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

/** A commit of one generation's documents (see {@link commitStatement}). */
export type GenerationBatch = Omit<ViewBatch, 'writer'> & { collection: string; generation: string };

/**
 * One statement for all the batches (data-modifying WITH clauses: one transaction, one round
 * trip): each table's newest documents over older ones, every stored checkpoint forward, and the
 * notice of what each batch reached. `building`: the tables of rebuilds not yet activated, whose
 * rows go as one JSON text and whose checkpoints no notice tells (no reader waits on them).
 */
export function commitStatement(batches: readonly GenerationBatch[], building: ReadonlySet<string>): { text: string; params: unknown[] } {
  // By table: a statement may write a row once, so each id's newest document and each table's furthest checkpoint.
  const tables = new Map<string, { documents: Map<string, ViewDocument>; checkpoint: LogPosition | null }>();
  const notice = new Map<LogPosition, string[]>();
  for (const { collection, generation, documents, checkpoint, store } of batches) {
    const name = table(collection, generation);
    let entry = tables.get(name);
    if (!entry) tables.set(name, (entry = { documents: new Map(), checkpoint: null }));
    keepNewest(entry.documents, documents);
    if (store !== false && (entry.checkpoint === null || checkpoint > entry.checkpoint)) entry.checkpoint = checkpoint;
    if (!building.has(name)) notice.set(checkpoint, [...(notice.get(checkpoint) ?? []), `${collection}@${generation}`]);
  }
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const clauses: string[] = [];
  for (const [name, { documents }] of tables) {
    if (documents.size === 0) continue;
    const rows = building.has(name) ? wholeRows(byId(documents.values()), param) : undefined;
    clauses.push(`d${clauses.length} AS (${rows ? upsertRows(name, rows) : upsertNewer(name, byId(documents.values()), param)})`);
  }
  const checkpoints = [...tables].filter(([, entry]) => entry.checkpoint !== null);
  if (checkpoints.length)
    clauses.push(
      `c AS (INSERT INTO view_checkpoints AS c (name, position)
           SELECT * FROM unnest(${param(checkpoints.map(([name]) => name))}::text[], ${param(checkpoints.map(([, e]) => e.checkpoint))}::text[])
           ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position WHERE c.position < EXCLUDED.position)`,
    );
  const told = notifyClause(notice, param);
  return { text: `${clauses.length ? `WITH ${clauses.join(',\n')}\n` : ''}SELECT ${told}`, params };
}

/**
 * The clauses that write `views` within another statement of the same database (an append's, so
 * in its transaction): each collection's documents into the generation this process reads, those
 * folded from events not yet written (at `PENDING_POSITION`) stamped with their unit's position as
 * relation `positions` (`u`, `pos`) gives it, the others at their own (a unit with no row there
 * writes nothing); each only over the stored document it was folded from (its `base`; none stored
 * for a null one) and only when newer, a table's rows in the order of their ids; none into a
 * generation another process has replaced meanwhile. Null when a collection is not defined here.
 */
export function inlineWrites(
  active: ServerGenerations,
  views: InlineDocuments,
  param: (value: unknown) => string,
  positions: string,
): InlineWrites | null {
  if (views.some(({ collection }) => !active.has(collection))) return null;
  const clauses: string[] = [];
  const written: string[] = [];
  for (const { collection, documents } of views) {
    const generation = active.get(collection)!;
    const docs = [...new Map(documents.map((d) => [d.doc._id, d])).values()].sort((a, b) => compareIds(a.doc, b.doc));
    const n = clauses.length / 2;
    const isCurrent = `coalesce((SELECT generation = ${param(generation)} FROM view_generations WHERE collection = ${param(collection)}), false)`;
    clauses.push(
      `b${n} AS (SELECT * FROM unnest(${param(docs.map((d) => d.doc._id))}::text[], ${param(docs.map((d) => d.base))}::text[]) AS b(id, base))`,
      `v${n} AS (INSERT INTO ${table(collection, generation)} AS t (id, pos, doc)
           SELECT d.id, CASE WHEN d.stamp THEN p.pos ELSE d.doc ->> '_pos' END,
                  CASE WHEN d.stamp THEN jsonb_set(d.doc, '{_pos}', to_jsonb(p.pos)) ELSE d.doc END
             FROM unnest(${param(docs.map((d) => d.doc._id))}::text[], ${param(docs.map((d) => d.unit))}::int[], ${param(docs.map((d) => JSON.stringify(d.doc)))}::jsonb[],
                         ${param(docs.map((d) => d.doc._pos === PENDING_POSITION))}::bool[])
                  WITH ORDINALITY AS d(id, u, doc, stamp, n)
             JOIN ${positions} AS p ON p.u = d.u
            WHERE ${isCurrent}
            ORDER BY d.n
           ON CONFLICT (id) DO UPDATE SET pos = EXCLUDED.pos, doc = EXCLUDED.doc
            WHERE t.pos < EXCLUDED.pos AND t.pos = (SELECT base FROM b${n} WHERE b${n}.id = EXCLUDED.id)
           RETURNING t.id)`,
    );
    written.push(`SELECT ${param(`${collection} `)} || id FROM v${n}`);
  }
  return { clauses, written: `array(${written.join(' UNION ALL ')})` };
}

type AheadBatches = ReadonlyArray<{ collection: string; documents: readonly ViewDocument[] }>;

/**
 * Documents written ahead of their fold. Calls made in one turn of the loop (and while a write is
 * out) are written together: a statement (a transaction) a collection, in the order the calls name
 * them, each table's rows in the order of their ids, as a commit locks them. It never holds one
 * table's rows while it waits for another's, so it cannot deadlock with the worker committing the
 * same documents. Position-guarded as a commit's, with no checkpoint and no notice. False for a
 * collection not defined here, or whose generation another process has replaced since this one
 * last looked (a rebuild): `replaced` is then called.
 */
export class WritesAhead {
  /** Documents waiting for the next write. */
  private readonly ahead: Array<{ batches: AheadBatches; done: (written: boolean) => void; failed: (error: unknown) => void }> = [];
  private writing = false;

  constructor(
    private readonly pool: Pool,
    private readonly active: ServerGenerations,
    private readonly replaced: () => void,
  ) {}

  write(batches: AheadBatches): Promise<boolean> {
    if (batches.some(({ collection }) => !this.active.has(collection))) return Promise.resolve(false);
    return new Promise((resolve, reject) => {
      this.ahead.push({ batches, done: resolve, failed: reject });
      if (!this.writing) {
        this.writing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
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
          if (!written) this.replaced();
          for (const call of calls) call.done(written);
        } catch (error) {
          for (const call of calls) call.failed(error);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
