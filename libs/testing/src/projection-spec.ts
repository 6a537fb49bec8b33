import { applyEvents, BatchDocuments, EventMetadata, LogPosition, Projection, RecordedEvent, ViewDocument } from '@deals/kernel';

/** An event as a projection spec is given it: the spec records it (id, stream revision, log position). */
export interface SpecEvent {
  type: string;
  data: unknown;
  /** The spec's `streamId` unless given. */
  streamId?: string;
  /** Laid over the spec's metadata (`occurredAt` among it). */
  metadata?: Partial<EventMetadata> & Record<string, unknown>;
}

export interface ProjectionSpecOptions {
  /** The stream of every event that names none. */
  streamId?: string;
  /** Every event's `occurredAt` unless its metadata says otherwise. */
  occurredAt?: string;
  /** Every event's metadata besides `occurredAt` (an event's own laid over it). */
  metadata?: Partial<EventMetadata> & Record<string, unknown>;
}

/** A document the store holds before any event: `_pos` defaults to a position before every event's. */
export type GivenDocument<V extends ViewDocument> = Omit<V, '_pos'> & { _pos?: LogPosition };

/** The documents after one batch, and those it changed (what the runner commits). */
interface Folded<V extends ViewDocument> {
  documents: Map<string, V>;
  changed: V[];
  /** The ids each read of a batch projection's documents asked for. */
  reads: string[][];
}

const POSITION_WIDTH = 20;
const position = (n: number): LogPosition => String(n).padStart(POSITION_WIDTH, '0');
const byId = <D extends object>(documents: Iterable<D>): D[] =>
  [...documents].sort((a, b) => {
    const [x, y] = [(a as { _id?: string })._id ?? '', (b as { _id?: string })._id ?? ''];
    return x < y ? -1 : x > y ? 1 : 0;
  });

/** The events and documents a spec is given, recorded: batches of events in log order. */
class History<V extends ViewDocument> {
  constructor(
    readonly options: ProjectionSpecOptions,
    readonly documents: readonly V[] = [],
    readonly batches: readonly (readonly RecordedEvent[])[] = [],
    /** Each given event, the last time it was recorded. */
    readonly sources: ReadonlyMap<SpecEvent, RecordedEvent> = new Map(),
  ) {}

  get recorded(): RecordedEvent[] {
    return this.batches.flat();
  }

  withDocuments(documents: readonly GivenDocument<V>[]): History<V> {
    const stored = documents.map((doc) => ({ ...doc, _pos: doc._pos ?? position(0) }) as V);
    return new History(this.options, [...this.documents, ...stored], this.batches, this.sources);
  }

  /** The history with these events as new batches: one an event, or all in one. */
  withEvents(events: readonly SpecEvent[], oneBatch: boolean): History<V> {
    const recorded = this.recorded;
    const sources = new Map(this.sources);
    const streamOf = (event: SpecEvent) => event.streamId ?? this.options.streamId ?? 's';
    const made = events.map((event, i): RecordedEvent => {
      const streamId = streamOf(event);
      const n = recorded.length + i + 1;
      const made: RecordedEvent = {
        id: `e${n}`,
        type: event.type,
        data: event.data,
        metadata: { occurredAt: this.options.occurredAt ?? '2026-01-01T00:00:00Z', ...this.options.metadata, ...event.metadata },
        streamId,
        // The stream's events before it: those recorded, and those of this call before it.
        revision:
          recorded.filter((e) => e.streamId === streamId).length + events.slice(0, i).filter((e) => streamOf(e) === streamId).length,
        position: position(n),
      };
      sources.set(event, made);
      return made;
    });
    return new History(this.options, this.documents, [...this.batches, ...(oneBatch ? [made] : made.map((e) => [e]))], sources);
  }
}

/** Shared by both specs: what each check asserts, once the batches are folded. */
abstract class SpecBase<V extends ViewDocument, Self> {
  constructor(
    protected readonly projection: Projection<V>,
    protected readonly history: History<V>,
  ) {}

  protected abstract with(history: History<V>): Self;

  /** Events the store held before, each folded as a batch of its own (as a live run may meet them). */
  given(...events: SpecEvent[]): Self {
    return this.with(this.history.withEvents(events, false));
  }

  /** Documents the store held before any event. */
  givenDocuments(...documents: GivenDocument<V>[]): Self {
    return this.with(this.history.withDocuments(documents));
  }

  /** Events folded in one batch, as a live run's page or a rebuild meets them: the batch `thenChanged` reports on. */
  when(...events: SpecEvent[]): Self {
    return this.with(this.history.withEvents(events, true));
  }

  /** Every event given, recorded (id, stream, revision, position), in log order. */
  get recorded(): RecordedEvent[] {
    return this.history.recorded;
  }

  /** The log position this given event was recorded at. */
  positionOf(event: SpecEvent): LogPosition {
    const recorded = this.history.sources.get(event);
    if (!recorded) throw new Error('positionOf: the event was not given to this spec');
    return recorded.position;
  }

  /** The position of the last event given. */
  get lastPosition(): LogPosition {
    const last = this.history.recorded.at(-1);
    if (!last) throw new Error('lastPosition: the spec was given no event');
    return last.position;
  }

  protected startingDocuments(): Map<string, V> {
    return new Map(this.history.documents.map((doc) => [doc._id, doc]));
  }

  protected checkDocuments(folded: Folded<V>, expected: readonly object[]): void {
    expect(byId(folded.documents.values())).toEqual(byId(expected));
  }

  protected found(folded: Folded<V>, id: string): V {
    const doc = folded.documents.get(id);
    if (!doc) throw new Error(`the projection left no document with the id asked for (it left ${folded.documents.size})`);
    return doc;
  }

  /** Each document of the last batch: its events folded one by one with `evolve`, and at once with `evolveRun`. */
  protected runsFolded(before: Map<string, V>): Array<{ oneByOne: V | null; atOnce: V | null }> {
    const { evolveRun } = this.projection;
    if (!evolveRun) throw new Error('thenRunFoldsAsOneByOne: the projection has no evolveRun');
    const handled = new Set(this.projection.handles);
    const runs = new Map<string, RecordedEvent[]>();
    for (const event of this.history.batches.at(-1) ?? [])
      if (handled.has(event.type))
        for (const id of this.projection.documentIds(event)) {
          const stored = before.get(id);
          if (stored && stored._pos >= event.position) continue;
          runs.set(id, [...(runs.get(id) ?? []), event]);
        }
    return [...runs].map(([id, run]) => {
      let oneByOne = before.get(id) ?? null;
      for (const event of run) oneByOne = this.projection.evolve(oneByOne, event, id) ?? oneByOne;
      return { oneByOne, atOnce: evolveRun.call(this.projection, before.get(id) ?? null, run, id) };
    });
  }
}

/**
 * Given events (and documents the store held), when a batch of events, then the documents the
 * projection leaves or the batch changed: the batches folded over the documents as the runner folds
 * them (`applyEvents`, each document's `_pos` guarding it). For a projection that folds its batches
 * itself (`applyBatch`), `batchProjectionSpec`.
 *
 * Each step returns a new spec: a spec given some events may be shared by several cases. No check is
 * named `then`: a spec returned from a test must not pass for a promise.
 */
export function projectionSpec<V extends ViewDocument>(projection: Projection<V>, options: ProjectionSpecOptions = {}): ProjectionSpec<V> {
  if (projection.applyBatch) throw new Error('projectionSpec: this projection folds its batches itself: use batchProjectionSpec');
  return new ProjectionSpec(projection, new History<V>(options));
}

export class ProjectionSpec<V extends ViewDocument> extends SpecBase<V, ProjectionSpec<V>> {
  protected with(history: History<V>): ProjectionSpec<V> {
    return new ProjectionSpec(this.projection, history);
  }

  private fold(batches = this.history.batches, documents = this.startingDocuments()): Folded<V> {
    let changed: V[] = [];
    for (const batch of batches) {
      changed = applyEvents(this.projection, documents, batch);
      for (const doc of changed) documents.set(doc._id, doc);
    }
    return { documents, changed, reads: [] };
  }

  /** The documents the projection leaves, by id. */
  documents(): Map<string, V> {
    return this.fold().documents;
  }

  /** The document the projection leaves under this id (fails when there is none). */
  document(id: string): V {
    return this.found(this.fold(), id);
  }

  /** The documents after each batch (each given event), in order: how the view moves. */
  states(): Array<{ event: RecordedEvent; documents: Map<string, V> }> {
    const documents = this.startingDocuments();
    return this.history.batches.map((batch) => {
      this.fold([batch], documents);
      return { event: batch[batch.length - 1], documents: new Map(documents) };
    });
  }

  /** The documents the last batch changed, in the order the runner would commit them. */
  changed(): V[] {
    return this.fold().changed;
  }

  /** The projection leaves exactly these documents (in any order). */
  thenDocuments(...expected: object[]): void {
    this.checkDocuments(this.fold(), expected);
  }

  /** The document under this id is exactly `expected`. */
  thenDocument(id: string, expected: object): void {
    expect(this.document(id)).toEqual(expected);
  }

  /** The document under this id holds at least `expected`'s fields. */
  thenDocumentMatches(id: string, expected: object): void {
    expect(this.document(id)).toMatchObject(expected);
  }

  /** The last batch changed exactly these documents, in the order the runner would commit them. */
  thenChanged(...expected: object[]): void {
    expect(this.fold().changed).toEqual(expected);
  }

  /** Every event folded again (one batch, and one by one) changes no document, and leaves them as they were. */
  thenReplayChangesNothing(): void {
    const { documents } = this.fold();
    const before = structuredClone(documents);
    const recorded = this.history.recorded;
    expect(applyEvents(this.projection, documents, recorded)).toEqual([]);
    for (const event of recorded) expect(applyEvents(this.projection, documents, [event])).toEqual([]);
    expect(documents).toEqual(before);
  }

  /** Every event folded in one batch leaves the documents one by one does. */
  thenSameInOneBatch(): void {
    const oneByOne = this.fold(this.history.recorded.map((e) => [e]));
    const together = this.fold([this.history.recorded]);
    expect(byId(together.documents.values())).toEqual(byId(oneByOne.documents.values()));
  }

  /** The last batch's events, of each document, give the same document through `evolveRun` at once as through `evolve` one by one. */
  thenRunFoldsAsOneByOne(): void {
    const before = this.fold(this.history.batches.slice(0, -1)).documents;
    for (const { oneByOne, atOnce } of this.runsFolded(before)) expect(atOnce).toEqual(oneByOne);
  }
}

/**
 * `projectionSpec` for a projection that folds each batch itself (`applyBatch`): the same steps,
 * each check a promise to await. The batch holds only the events the projection handles, and reads
 * the documents the store held before it, as the runner's does.
 */
export function batchProjectionSpec<V extends ViewDocument>(
  projection: Projection<V>,
  options: ProjectionSpecOptions = {},
): BatchProjectionSpec<V> {
  if (!projection.applyBatch) throw new Error('batchProjectionSpec: this projection folds event by event: use projectionSpec');
  return new BatchProjectionSpec(projection, new History<V>(options));
}

export class BatchProjectionSpec<V extends ViewDocument> extends SpecBase<V, BatchProjectionSpec<V>> {
  protected with(history: History<V>): BatchProjectionSpec<V> {
    return new BatchProjectionSpec(this.projection, history);
  }

  private async fold(batches = this.history.batches, documents = this.startingDocuments()): Promise<Folded<V>> {
    const handled = new Set(this.projection.handles);
    let changed: V[] = [];
    let reads: string[][] = [];
    for (const batch of batches) {
      const mine = batch.filter((event) => handled.has(event.type));
      reads = [];
      const read: BatchDocuments<V> = {
        get: async (ids) => {
          reads.push([...ids]);
          return new Map(ids.flatMap((id) => (documents.has(id) ? [[id, documents.get(id)!] as const] : [])));
        },
      };
      changed = mine.length ? await this.projection.applyBatch!(mine, read) : [];
      for (const doc of changed) documents.set(doc._id, doc);
    }
    return { documents, changed, reads };
  }

  /** The documents the projection leaves, by id. */
  async documents(): Promise<Map<string, V>> {
    return (await this.fold()).documents;
  }

  /** The document the projection leaves under this id (fails when there is none). */
  async document(id: string): Promise<V> {
    return this.found(await this.fold(), id);
  }

  /** The ids each of the last batch's reads of stored documents asked for. */
  async lastBatchReads(): Promise<string[][]> {
    return (await this.fold()).reads;
  }

  /** The projection leaves exactly these documents (in any order). */
  async thenDocuments(...expected: object[]): Promise<void> {
    this.checkDocuments(await this.fold(), expected);
  }

  /** The last batch changed exactly these documents, in the order the projection returned them. */
  async thenChanged(...expected: object[]): Promise<void> {
    expect((await this.fold()).changed).toEqual(expected);
  }

  /** Every event folded again (one batch, and one by one) changes no document, and leaves them as they were. */
  async thenReplayChangesNothing(): Promise<void> {
    const { documents } = await this.fold();
    const before = structuredClone(documents);
    const recorded = this.history.recorded;
    expect((await this.fold([recorded], documents)).changed).toEqual([]);
    for (const event of recorded) expect((await this.fold([[event]], documents)).changed).toEqual([]);
    expect(documents).toEqual(before);
  }

  /** Every event folded in one batch leaves the documents one by one does. */
  async thenSameInOneBatch(): Promise<void> {
    const oneByOne = await this.fold(this.history.recorded.map((e) => [e]));
    const together = await this.fold([this.history.recorded]);
    expect(byId(together.documents.values())).toEqual(byId(oneByOne.documents.values()));
  }
}
