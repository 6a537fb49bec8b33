import { InlineDocument, inlineKey } from '@deals/kernel';
import { createHash } from 'node:crypto';
import { WIDTH } from './postgres-event-log.schema';
import { APPEND_WITH, appendAnswer, PendingUnit, UNIQUE_VIOLATION } from './postgres-event-log.append-sql';

/*
 * The view documents an append writes in its own statement (`appendWithViews`, where the log and
 * the views share a database). The view store of that database says how (`InlineViewTables`).
 */

/** Documents an append writes in its own statement, each with the number of the append's unit in that statement. */
export type InlineDocuments = ReadonlyArray<{ collection: string; documents: ReadonlyArray<InlineDocument & { unit: number }> }>;

/** The clauses of a statement that writes {@link InlineDocuments}. */
export interface InlineWrites {
  /** Data-modifying WITH clauses (`name AS (...)`), one a collection. */
  clauses: string[];
  /** An expression: the documents written, as `<collection> <id>` (text[]). */
  written: string;
}

/** Where a view store of the same database writes documents within an append's statement (`PostgresViewStore.inlineWrites`). */
export interface InlineViewTables {
  inlineWrites(views: InlineDocuments, param: (value: unknown) => string, positions: string): InlineWrites | null;
}

/**
 * Whether a statement failed with this SQLSTATE for what it wrote, not for the connection or the
 * transaction's race (those are tried again whole): data exceptions, integrity violations but a
 * unique one, undefined objects (a dropped table) and program limits.
 */
export const refusedDocuments = (code: string): boolean =>
  /^[0-9A-Z]{5}$/.test(code) && code !== UNIQUE_VIOLATION && ['22', '23', '42', '54'].includes(code.slice(0, 2));

/**
 * Each written unit's position (`u`, `pos`: its last event's, as `positionOf` writes it), for
 * the documents written with it: a clause of the group statement, after {@link APPEND_WITH}.
 */
const UNIT_POSITIONS = `unit_pos AS (
         SELECT req.u, '1' || lpad(me.tx::text, ${WIDTH}, '0') || ':' || lpad(max(added.position)::text, ${WIDTH}, '0') AS pos
           FROM added JOIN req ON req.stream_id = added.stream_id CROSS JOIN me GROUP BY req.u, me.tx)`;

/**
 * The group statement with the documents its units carry (`appendWithViews`), each stamped with
 * its unit's last position; named by its text (the tables' generations are in it), so each
 * connection plans each kind once; `sent`: the documents (`<collection> <id>`) of each unit it
 * writes. Null when none carries any, or a collection is not one the view store knows (or none is given).
 */
export function statementWithViews(
  inlineViews: InlineViewTables | null,
  group: ReadonlyArray<Pick<PendingUnit, 'views'>>,
  values: unknown[],
) {
  if (!inlineViews || !group.some((unit) => unit.views?.length)) return null;
  const byCollection = new Map<string, Array<InlineDocument & { unit: number }>>();
  // A document two units carry (each folded on what it knew) goes with the first only: the second is told it was not written.
  const sent = group.map(() => new Set<string>());
  const taken = new Set<string>();
  group.forEach(({ views }, i) => {
    for (const { collection, documents } of views ?? []) {
      let docs = byCollection.get(collection);
      if (!docs) byCollection.set(collection, (docs = []));
      for (const document of documents) {
        const key = inlineKey(collection, document.doc._id);
        if (taken.has(key)) continue;
        taken.add(key);
        sent[i].add(key);
        docs.push({ ...document, unit: i + 1 });
      }
    }
  });
  const params = [...values];
  const param = (value: unknown) => `$${params.push(value)}`;
  const writes = inlineViews.inlineWrites(
    [...byCollection].map(([collection, documents]) => ({ collection, documents })),
    param,
    'unit_pos',
  );
  if (!writes) return null;
  const text = `${APPEND_WITH},\n${UNIT_POSITIONS},\n${writes.clauses.join(',\n')}\n${appendAnswer(`,\n ${writes.written} AS views_written`)}`;
  return { name: `deals_append_views_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text, values: params, sent };
}
