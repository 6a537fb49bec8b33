import { inlineKey, type InlineDocument, type InlineViews } from '../ports/event-store.capabilities';
import type { EventStore, LogPosition, RecordedEvent } from '../ports/event-store.port';
import type { ViewDocument } from '../ports/view-store.port';
import type { Projection } from '../projection';
import type { RequestWrites } from '../read-your-writes';

/** An event decided and not yet appended: its stream, but no position yet. */
export interface PendingEvent {
  type: string;
  data: unknown;
  streamId: string;
}

/** The position a document folded from {@link PendingEvent}s carries until its write stamps it. */
export const PENDING_POSITION = '';

/** A document as a request's units of work folded it, and whether the write that carried it wrote it (then stored at its `_pos`). */
export interface FoldedDocument {
  doc: ViewDocument;
  written: boolean;
}

/**
 * The inline projections of one store's command engine (see `Projection.inline`): each unit of
 * work's documents are folded from its events, from nothing for a document its events begin, else
 * onto the document an earlier unit of the same request folded (`RequestWrites.folded`), and
 * written with the unit where the store can (`appendWithViews`), only over the stored document
 * they rest on. A document no unit of the request began is left to the projection's own run: only
 * the request's own units are known to have made it, where another process's may have changed a
 * document since any fold of this one.
 */
export class InlineProjections {
  constructor(readonly projections: readonly Projection[]) {}

  /**
   * Folds a unit's events onto the documents they change: each from the one folded before it (by
   * an earlier unit of this batch, in `folded`, or of the request, in `earlier`), from nothing for
   * one they begin. Answers the documents to write with the unit: those resting on a stored
   * document known (the request's last write of it, or none for one begun), each with that
   * document's position as base. `touched` gets the key (`inlineKey`) of every document it folded.
   */
  fold(
    events: readonly PendingEvent[],
    folded: Map<string, Folded>,
    touched: Set<string>,
    earlier: ReadonlyMap<string, FoldedDocument> | null,
  ): InlineViews {
    const views: Array<{ collection: string; documents: InlineDocument[] }> = [];
    for (const projection of this.projections) {
      const runs = new Map<string, RecordedEvent[]>();
      for (const event of events) {
        if (!projection.handles.includes(event.type)) continue;
        const recorded = { ...event, id: '', revision: 0, position: PENDING_POSITION, metadata: { occurredAt: '' } } as RecordedEvent;
        for (const id of projection.documentIds(recorded)) {
          let run = runs.get(id);
          if (!run) runs.set(id, (run = []));
          run.push(recorded);
        }
      }
      const documents: InlineDocument[] = [];
      for (const [id, run] of runs) {
        const key = inlineKey(projection.name, id);
        const before = projection.inline!.bornOf.includes(run[0].type) ? BORN : (folded.get(key) ?? restingOn(earlier?.get(key)));
        if (!before) continue;
        let doc: ViewDocument | null = before.doc;
        for (const event of run) doc = projection.evolve(doc, event, id) ?? doc;
        if (!doc) continue;
        const made: Folded = { doc: { ...doc, _id: id, _pos: PENDING_POSITION }, base: before.base };
        folded.set(key, made);
        touched.add(key);
        if (made.base !== undefined) documents.push({ doc: made.doc, base: made.base });
      }
      if (documents.length) views.push({ collection: projection.name, documents });
    }
    return views;
  }
}

/** What a fold rests on: a document the request folded, stored at its position if written (else no base: folded, not written). */
const restingOn = (known: FoldedDocument | undefined): Folded | undefined =>
  known && { doc: known.doc, base: known.written ? known.doc._pos : undefined };

/**
 * A document folded in a batch: its base is the stored document's position it rests on (null: one
 * its events begin, none stored), or undefined when that is unknown (it is then not written).
 */
export interface Folded {
  doc: ViewDocument;
  base: LogPosition | null | undefined;
}

const BORN: Folded = { doc: null as unknown as ViewDocument, base: null };

/** Each store's inline projections, as the composition registered them. */
const registered = new WeakMap<EventStore, InlineProjections>();

/** Registers the projections that run inline with `store`'s appends (once, as the process composes its parts). */
export function registerInlineProjections(store: EventStore, projections: readonly Projection[]): InlineProjections {
  for (const projection of projections)
    if (!projection.inline) throw new TypeError(`projection ${projection.name} does not declare that it runs inline`);
  const inline = new InlineProjections(projections);
  registered.set(store, inline);
  return inline;
}

/** The inline projections registered with `store`, or null. */
export const inlineProjectionsOf = (store: EventStore): InlineProjections | null => registered.get(store) ?? null;

/**
 * A document of an inline projection as the request's last unit of work that changed it folded it
 * (`written`: and wrote it with its events, so every reader finds it), or null when none did.
 */
export function inlineDocument<V extends ViewDocument>(
  writes: RequestWrites,
  projection: Projection<V>,
  id: string,
): { doc: V; written: boolean } | null {
  return (writes.folded.get(inlineKey(projection.name, id)) as { doc: V; written: boolean } | undefined) ?? null;
}
