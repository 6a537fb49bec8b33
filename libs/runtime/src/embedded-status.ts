import { dataPaths, MingoViewStore, SqliteEventStore } from '@deals/adapters';
import { countAfter, EventStore, isDeadLetterCollection, LogPosition, ViewStore } from '@deals/kernel';
import { ALL_PROJECTIONS, defineViews } from './projections';
import type { ServiceConfig } from './service-config';

/** Events after a checkpoint are counted up to this many (a status must not read a whole log). */
const LAG_SCAN_LIMIT = 100_000;

export interface ProjectionStatusRow {
  collection: string;
  generation: string;
  checkpoint: LogPosition | null;
  documents: number;
  head: LogPosition | null;
  /** Events after the checkpoint, up to LAG_SCAN_LIMIT. */
  lag: number;
}

/** Each view's active generation, checkpoint, documents, and how far behind the log's head it is. */
export async function projectionStatus(
  store: EventStore,
  views: ViewStore,
): Promise<{ head: LogPosition | null; rows: ProjectionStatusRow[] }> {
  const head = await store.head();
  const rows: ProjectionStatusRow[] = [];
  for (const status of await views.status()) {
    // Dead letters are no view (`projections:dead-letters` lists them).
    if (isDeadLetterCollection(status.collection)) continue;
    rows.push({ ...status, head, lag: await countAfter(store, status.checkpoint, LAG_SCAN_LIMIT) });
  }
  return { head, rows };
}

/** `projections:status`'s output: JSON, or a line per view. */
export function formatProjectionStatus({ head, rows }: { head: LogPosition | null; rows: ProjectionStatusRow[] }, json: boolean): string {
  if (json) return `${JSON.stringify(rows)}\n`;
  const lines = [`log head: ${head ?? '(empty)'}`];
  for (const r of rows) {
    const lag = r.lag === 0 ? 'caught up' : `${r.lag >= LAG_SCAN_LIMIT ? `${LAG_SCAN_LIMIT}+` : r.lag} events behind`;
    lines.push(
      `${r.collection.padEnd(22)} ${r.generation}  checkpoint ${r.checkpoint ?? '(none)'}  ${String(r.documents).padStart(7)} docs  ${lag}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `projections:status` of the embedded mode, read from the data folder's files without the
 * service's modules (most of the CLI's start): the log's head, and each view's file as the view
 * store reports it without loading it.
 */
export async function embeddedProjectionStatus(config: ServiceConfig, json: boolean): Promise<string> {
  const paths = dataPaths(config.dataDir);
  const store = new SqliteEventStore(paths.events);
  const views = new MingoViewStore(paths.views, {}, undefined, true, 'as-defined');
  try {
    await defineViews(views, ALL_PROJECTIONS);
    return formatProjectionStatus(await projectionStatus(store, views), json);
  } finally {
    await views.close();
    await store.close();
  }
}
