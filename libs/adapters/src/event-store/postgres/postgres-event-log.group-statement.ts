import { WrongExpectedRevision } from '@deals/kernel';
import { Pool, PoolClient } from 'pg';
import { positionOf } from './postgres-event-log.schema';
import {
  ANY_REVISION,
  APPEND_GROUP,
  DEADLOCK,
  eventColumns,
  GroupOutcome,
  GroupRetry,
  NO_STREAM,
  PendingUnit,
  UNIQUE_VIOLATION,
} from './postgres-event-log.append-sql';
import { InlineViewTables, refusedDocuments, statementWithViews } from './inline-views';

/** No documents. */
const NONE: ReadonlySet<string> = new Set();

/**
 * A group whose appends name different streams (the command engine's: one write a stream at a
 * time) as one statement, its own transaction: one round trip. It locks the streams' rows in one
 * order, checks each append's expected revision (a unit with one refused writes nothing), and
 * writes the accepted units' stream rows, events and notice, unless the last writer of one of the
 * streams began after it ({@link GroupRetry}, nothing written). A lone append whose new stream
 * another transaction created meanwhile writes nothing and is tried again (`again`); the rest
 * stand. Such a stream of a unit of several appends fails the statement, and the group is tried again.
 */
export async function writeStatement<U extends Pick<PendingUnit, 'appends' | 'views'>>(
  group: readonly U[],
  on: Pool | PoolClient,
  inlineViews: InlineViewTables | null,
): Promise<GroupOutcome<U>> {
  const appends = group.flatMap((unit, u) => unit.appends.map((append) => ({ append, u: u + 1 })));
  const events = appends.flatMap(({ append }, k) => append.events.map((event, offset) => ({ k: k + 1, offset, event })));
  const values = [
    appends.map(({ append }) => append.streamId),
    appends.map(({ append: { expected } }) => (expected === 'any' ? ANY_REVISION : expected === 'no_stream' ? NO_STREAM : expected)),
    appends.map(({ append }) => append.events.length),
    events.map((e) => e.k),
    events.map((e) => e.offset),
    ...eventColumns(events),
    appends.map(({ u }) => u),
  ];
  const withViews = statementWithViews(inlineViews, group, values);
  const answer = await on
    .query<{
      go: boolean;
      me: string;
      verdicts: Array<{ k: number; current: number | null; ok: boolean; known: boolean }>;
      made: string[] | null;
      added: Array<{ k: number; position: string }> | null;
      views_written?: string[];
    }>(withViews ?? { name: 'deals_append_units', text: APPEND_GROUP, values })
    .catch((error: unknown) => {
      const code = (error as { code?: string }).code ?? '';
      // A unit's new stream made meanwhile by another transaction; else not expected (known streams
      // are written under their locks), but a retry is the answer.
      if ([UNIQUE_VIOLATION, DEADLOCK].includes(code)) throw new GroupRetry(String(error));
      // The documents refused (a view's table dropped since this process last looked, when a
      // rebuild replaced it elsewhere; a document the server would not take): the statement wrote
      // nothing, and the appends go again without their documents, which their requests then
      // write after or wait for. Appends made after a charge are not failed by a view.
      if (withViews && refusedDocuments(code)) return null;
      throw error;
    });
  if (answer === null)
    return writeStatement(
      group.map((unit) => ({ ...unit, views: undefined })),
      on,
      inlineViews,
    );
  const [{ go, me, verdicts, made, added, views_written: viewsWritten = [] }] = answer.rows;
  const documents = new Set(viewsWritten);
  if (!go) throw new GroupRetry('a later transaction wrote one of the streams first');
  const verdictOf = new Map(verdicts.map((v) => [v.k, v]));
  const created = new Set(made ?? []);
  const last = new Map<number, string>();
  for (const { k, position } of added ?? []) last.set(k, position);
  const outcome: Required<GroupOutcome<U>> = { written: [], refused: [], again: [] };
  let k = 0;
  for (const [u, unit] of group.entries()) {
    const ks = unit.appends.map(() => ++k);
    const refusedAt = ks.findIndex((key) => !verdictOf.get(key)!.ok);
    if (refusedAt >= 0) {
      const { streamId, expected } = unit.appends[refusedAt];
      const error = new WrongExpectedRevision(streamId, expected, verdictOf.get(ks[refusedAt])!.current ?? 'no_stream');
      outcome.refused.push({ unit, error });
      continue;
    }
    const lone = unit.appends.length === 1;
    if (lone && !verdictOf.get(ks[0])!.known && !created.has(unit.appends[0].streamId)) {
      outcome.again.push(unit);
      continue;
    }
    const results = unit.appends.map((append, i) => ({
      nextExpectedRevision: (verdictOf.get(ks[i])!.current ?? -1) + append.events.length,
      position: positionOf({ tx: me, position: last.get(ks[i])! }),
    }));
    // Its documents written: all those the statement wrote of the ones it carried.
    const own = withViews?.sent[u] ?? NONE;
    outcome.written.push({ unit, results, documents: new Set([...own].filter((key) => documents.has(key))) });
  }
  return outcome;
}
