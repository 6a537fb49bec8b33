import { inlineKey, type InlineDocument, type InlineViews } from '../ports/event-store.capabilities';
import type { EventStore, LogPosition, RecordedEvent } from '../ports/event-store.port';
import type { ViewDocument } from '../ports/view-store.port';
import type { Projection } from '../projection';
import { RecentMap } from '../recent-map';

/** An event decided and not yet appended: its stream, but no position yet. */
export interface PendingEvent {
  type: string;
  data: unknown;
  streamId: string;
}

/** The position a document folded from {@link PendingEvent}s carries until its write stamps it. */
export const PENDING_POSITION = '';

/** How many documents of its inline projections a process remembers (the last it folded). */
const REMEMBERED = 20_000;

/**
 * The inline projections of one store's command engine (see `Projection.inline`): each unit of
 * work's documents are folded from its events onto the documents this process last folded (a
 * document its events begin, from nothing), and written with the unit where the store can
 * (`appendWithViews`), only over the stored document they were folded from. A document whose last
 * fold this process does not remember is left to the projection's own run.
 */
export class InlineProjections {
  /** By `<collection> <id>`: the document as last folded, and whether the write that carried it wrote it (then stored at its `_pos`). */
  private readonly known = new RecentMap<string, { doc: ViewDocument; written: boolean }>(REMEMBERED);

  constructor(readonly projections: readonly Projection[]) {}

  /**
   * Folds a unit's events onto the documents they change: each from the one folded before it (by
   * an earlier unit of this batch, in `folded`, or remembered), from nothing for one they begin.
   * Answers the documents to write with the unit: those resting on a stored document this process
   * knows (its last write's, or none for one begun), each with that document's position as base.
   * `touched` gets the key (`inlineKey`) of every document the unit folded.
   */
  fold(events: readonly PendingEvent[], folded: Map<string, Folded>, touched: Set<string>): InlineViews {
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
        const before = projection.inline!.bornOf.includes(run[0].type) ? BORN : (folded.get(key) ?? this.stored(key));
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

  /** After the batch's write (one append, at `position`): each document folded, and whether it was written. */
  remember(folded: ReadonlyMap<string, Folded>, position: LogPosition, written: ReadonlySet<string>): void {
    for (const [key, { doc }] of folded) this.known.set(key, { doc: { ...doc, _pos: position }, written: written.has(key) });
  }

  /** The document as this process last folded it, or null; `written` whether the write that carried it wrote it too. */
  document<V extends ViewDocument>(projection: Projection<V>, id: string): { doc: V; written: boolean } | null {
    const known = this.known.get(inlineKey(projection.name, id));
    return known ? { doc: known.doc as V, written: known.written } : null;
  }

  /** What a fold of `key` rests on: the remembered document, written at its position (else no base: folded, not written). */
  private stored(key: string): Folded | undefined {
    const known = this.known.get(key);
    return known && { doc: known.doc, base: known.written ? known.doc._pos : undefined };
  }
}

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
 * A document of an inline projection as this process's last unit of work that changed it folded
 * it (`written`: and wrote it with its events, so every reader finds it), or null when it has none.
 */
export function inlineDocument<V extends ViewDocument>(
  store: EventStore,
  projection: Projection<V>,
  id: string,
): { doc: V; written: boolean } | null {
  return inlineProjectionsOf(store)?.document(projection, id) ?? null;
}
