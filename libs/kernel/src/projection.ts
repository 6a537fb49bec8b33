import type { LogPosition, RecordedEvent } from './ports/event-store.port';
import type { IndexSpec, ViewDocument } from './ports/view-store.port';

/**
 * A read model: one collection, filled by folding the events it handles into documents.
 * `evolve` is pure; the runner guards each document with the position of the last event applied
 * to it, so replaying events never changes a view twice.
 */
export interface Projection<V extends ViewDocument = ViewDocument> {
  /**
   * Also the collection name: snake_case of the question the view answers. When `evolve` changes
   * meaning, give it a new name (`deal_details_v2`): the new collection is filled from the start of
   * the log on the next start, while the old one is left behind untouched.
   */
  readonly name: string;
  readonly handles: readonly string[];
  readonly indexes: IndexSpec[];
  /** See `DefineOptions.keepInMemory`: the catalogue's views. */
  readonly keepInMemory?: boolean;
  /**
   * False for a view that answers do not wait for (read your writes): a feed of what happened,
   * read by polling a cursor, whose lag of a few milliseconds no caller can tell from a later
   * event, and whose fold must not hold every write's answer back.
   */
  readonly answersWait?: boolean;
  /**
   * Runs inline: registered with the command engine of the process's log
   * (`registerInlineProjections`), its documents are folded in each unit of work whose events it
   * handles and written in that unit's transaction where the log can, so every reader finds them
   * with the events (see `InlineProjections`); its run folds them too, as any other view's.
   * `bornOf`: the events that begin a document (folded from nothing).
   */
  readonly inline?: { bornOf: readonly string[] };
  /** Ids of the documents an event changes (usually one). */
  documentIds(event: RecordedEvent): string[];
  /** The document after the event, or null to leave it as it is. `_pos` is set by the runner. */
  evolve(view: V | null, event: RecordedEvent, documentId: string): V | null;
  /**
   * Optional: the document after a run of its events (in log order, each newer than the document),
   * exactly what folding them with `evolve` gives, computed at once (a hot document takes dozens of
   * events per batch, and copying it for each is most of the work). Its `_pos` becomes the run's
   * last position.
   */
  evolveRun?(view: V | null, events: readonly RecordedEvent[], documentId: string): V | null;
  /**
   * Optional, for a view whose documents depend on one another (a feed that joins what it knows of
   * a resource with who listens to it): folds the whole batch itself (only the events it handles),
   * reading the stored documents it needs through `documents` and keeping its own changes, and
   * returns every document it changed. When given, `documentIds` and `evolve` are not used for the batch. It must
   * be deterministic (a rebuild makes the same documents) and skip events a document already holds.
   */
  applyBatch?(events: readonly RecordedEvent[], documents: BatchDocuments<V>): Promise<V[]>;
}

/** The stored documents of a view, as a batch reads them (each from the store once). */
export interface BatchDocuments<V extends ViewDocument> {
  get(ids: readonly string[]): Promise<Map<string, V>>;
}

export function defineProjection<V extends ViewDocument>(projection: Projection<V>): Projection<V> {
  return projection;
}

/** Folds a batch of events into the documents they touch; pure, shared by live runs and rebuilds. */
export function applyEvents<V extends ViewDocument>(
  projection: Projection<V>,
  current: Map<string, V>,
  events: readonly RecordedEvent[],
): V[] {
  const handled = new Set(projection.handles);
  // Each document's events, in log order: documents are folded independently of one another.
  const runs = new Map<string, RecordedEvent[]>();
  for (const event of events) {
    if (!handled.has(event.type)) continue;
    for (const id of projection.documentIds(event)) {
      const before = current.get(id);
      if (before && before._pos >= event.position) continue;
      let run = runs.get(id);
      if (!run) runs.set(id, (run = []));
      run.push(event);
    }
  }
  const changed: V[] = [];
  for (const [id, run] of runs) {
    const before = current.get(id) ?? null;
    if (projection.evolveRun) {
      const after = projection.evolveRun(before, run, id);
      if (after) changed.push(stamped(after, id, run[run.length - 1].position as LogPosition));
      continue;
    }
    let doc = before;
    let position: LogPosition | null = null;
    for (const event of run) {
      const after = projection.evolve(doc, event, id);
      if (after) [doc, position] = [after, event.position];
    }
    if (doc && position !== null) changed.push(stamped(doc, id, position));
  }
  return changed;
}

/** Ids of the documents a batch may change, to load them before `applyEvents`. */
export function touchedIds(projection: Projection, events: readonly RecordedEvent[]): string[] {
  const handled = new Set(projection.handles);
  const ids = new Set<string>();
  for (const event of events) if (handled.has(event.type)) for (const id of projection.documentIds(event)) ids.add(id);
  return [...ids];
}

/** `doc` with its id and position: itself when it has them already (projections usually set both), else a copy. */
function stamped<V extends ViewDocument>(doc: V, id: string, position: LogPosition): V {
  return doc._id === id && doc._pos === position ? doc : { ...doc, _id: id, _pos: position };
}
