import { applyEvents, BatchDocuments, Projection, touchedIds } from './projection';
import { EventStore, LogPosition, LogSubscription, RecordedEvent } from './ports/event-store.port';
import { ViewDocument, ViewStore, ViewWriter } from './ports/view-store.port';
import { PositionWaiters } from './position-waiters';

export interface RunnerLogger {
  log(message: string): void;
  error(message: string, error?: unknown): void;
}

/** Folds one batch over a writer's stored documents (those it touches, read once); the documents it changes, not committed. */
export async function foldBatch(projection: Projection, writer: ViewWriter, events: readonly RecordedEvent[]): Promise<ViewDocument[]> {
  if (projection.applyBatch) {
    const handled = new Set(projection.handles);
    const mine = events.filter((event) => handled.has(event.type));
    return mine.length ? await projection.applyBatch(mine, batchDocuments(writer)) : [];
  }
  const ids = touchedIds(projection, events);
  const current = ids.length ? await writer.getMany(ids) : new Map();
  return applyEvents(projection, current, events);
}

/** Applies one batch to a writer: load touched documents, fold, commit with the checkpoint; the documents committed. */
async function applyBatch(projection: Projection, writer: ViewWriter, events: readonly RecordedEvent[]): Promise<readonly ViewDocument[]> {
  if (events.length === 0) return [];
  const documents = await foldBatch(projection, writer, events);
  await writer.commit(documents, events[events.length - 1].position);
  return documents;
}

/** The stored documents a batch reads, each read from the writer once. */
function batchDocuments(writer: ViewWriter): BatchDocuments<ViewDocument> {
  const seen = new Map<string, ViewDocument | null>();
  return {
    async get(ids) {
      const missing = ids.filter((id) => !seen.has(id));
      if (missing.length) {
        const stored = await writer.getMany(missing);
        for (const id of missing) seen.set(id, stored.get(id) ?? null);
      }
      const found = new Map<string, ViewDocument>();
      for (const id of ids) {
        const doc = seen.get(id);
        if (doc) found.set(id, doc);
      }
      return found;
    },
  };
}

/**
 * Keeps one projection's active generation caught up with the log, live, through a subscription of
 * its own (the embedded store's views; views on a server are kept by a `ProjectionDaemon`).
 * Restarts from the new generation's checkpoint when a rebuild elsewhere activates one.
 */
export class ProjectionRunner {
  private subscription: LogSubscription | null = null;
  private position: LogPosition | null = null;
  private readonly waiters = new PositionWaiters();
  private stopSwitchListener: (() => void) | null = null;
  private restarting: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly committedListeners: Array<(documents: readonly ViewDocument[]) => void> = [];

  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    readonly projection: Projection,
    private readonly logger: RunnerLogger,
  ) {}

  async start(): Promise<void> {
    this.stopSwitchListener = this.views.onGenerationSwitch((collection) => {
      if (collection === this.projection.name) this.restarting = this.restarting.then(() => this.restart());
    });
    await this.subscribe();
  }

  /** Position this runner has applied up to, as far as this process knows. */
  get caughtUpTo(): LogPosition | null {
    return this.position;
  }

  /**
   * Tells `listener` of the documents each live batch commits, once committed (never during a
   * rebuild elsewhere). A reaction that must not miss one also looks at the view when it starts:
   * a process that stopped between a commit and its listener tells nobody.
   */
  onCommitted(listener: (documents: readonly ViewDocument[]) => void): void {
    this.committedListeners.push(listener);
  }

  /** Resolves true once the view includes `position`, false after `timeoutMs`. */
  waitFor(position: LogPosition, timeoutMs: number): Promise<boolean> {
    // A runner never abandons its waits (only a daemon that stops keeping a view does): never null.
    return this.waiters.wait(this.position, position, timeoutMs) as Promise<boolean>;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopSwitchListener?.();
    await this.restarting;
    await this.subscription?.close();
    this.subscription = null;
  }

  private async subscribe(): Promise<void> {
    const writer = this.views.writer(this.projection.name);
    this.position = await writer.checkpoint();
    this.release();
    this.subscription = this.store.subscribe({
      after: this.position,
      types: this.projection.handles,
      onEvents: async (events) => {
        const documents = await applyBatch(this.projection, writer, events);
        this.position = events[events.length - 1].position;
        this.release();
        if (documents.length) for (const listener of this.committedListeners) listener(documents);
      },
      onError: (error) => this.logger.error(`projection ${this.projection.name} failed; retrying`, error),
    });
  }

  private async restart(): Promise<void> {
    if (this.stopped) return;
    await this.subscription?.close();
    this.logger.log(`projection ${this.projection.name}: switched to a rebuilt generation`);
    await this.subscribe();
  }

  private release(): void {
    this.waiters.reached(this.position);
  }
}

export interface RebuildProgress {
  /** Events the views handle, folded so far. */
  applied: number;
  total: number | null;
  position: LogPosition | null;
}

/** Documents a rebuild keeps of each view after folding them, so that the next pages fold them without reading them back. */
const REBUILD_KEEPS = 2_000;

/**
 * Replays the log, in one pass, into a fresh generation of each projection given, then activates
 * them. Only the events the projections handle are read (`readTypes`), the next page while the
 * last is folded; each page's documents of every view are committed together (`commitAll`), and
 * kept to fold the next pages (the rebuild is its generations' only writer until it activates
 * them). Readers keep the old generations until the switch; a live runner then continues from the
 * new checkpoint. If anything fails, the generations not yet activated are dropped; those already
 * activated are live and complete, and stay.
 */
export async function rebuildProjections(
  store: EventStore,
  views: ViewStore,
  projections: Projection[],
  onProgress: (progress: RebuildProgress) => void = () => undefined,
  pageSize = 2000,
  keep = REBUILD_KEEPS,
): Promise<RebuildProgress> {
  const targets = await Promise.all(projections.map((p) => views.beginRebuild(p.name)));
  const progress: RebuildProgress = { applied: 0, total: null, position: null };
  const types = [...new Set(projections.flatMap((p) => p.handles))];
  const readers = targets.map((target) => cachedWriter(target, keep));
  let activated = 0;
  try {
    const read = (after: LogPosition | null) => store.readTypes({ after, maxCount: pageSize, types });
    /** Folds and commits the log from where the rebuild is to its end as it reads it now. */
    const foldToEnd = async (): Promise<void> => {
      let next = read(progress.position);
      // The last page's commit, under way while the next page folds: the documents it writes are kept, so no fold reads them back.
      let committing: Promise<void> = Promise.resolve();
      try {
        for (;;) {
          const page = await next;
          if (page.through === progress.position) break;
          const through = page.through as LogPosition;
          next = read(through);
          // Awaited at the top of the loop, or dropped below when the fold fails.
          next.catch(() => undefined);
          const folded = await Promise.all(projections.map((p, i) => foldBatch(p, readers[i], page.events)));
          folded.forEach((documents, i) => readers[i].keep(documents));
          await committing;
          committing = views.commitAll(targets.map((writer, i) => ({ writer, documents: folded[i], checkpoint: through })));
          committing.catch(() => undefined);
          progress.applied += page.events.length;
          progress.position = through;
          onProgress(progress);
        }
      } finally {
        await committing.catch(() => undefined);
      }
      await committing;
    };
    await foldToEnd();
    await Promise.all(targets.map((target) => target.complete?.()));
    // What was written while the indexes were built: the generations switch as close to the log's end as they were.
    await foldToEnd();
    for (const target of targets) {
      await target.activate();
      activated++;
    }
    return progress;
  } catch (error) {
    // The one whose activation failed is not live: dropped with the rest (its drop failing too must not hide why).
    await Promise.allSettled(targets.slice(activated).map((t) => t.abandon()));
    throw error;
  }
}

/**
 * A rebuild's writer that keeps the documents folded (up to `limit`, or the last page's when more;
 * the newest kept), and reads only the others from the store, whose commits have ended.
 */
function cachedWriter(writer: ViewWriter, limit: number): ViewWriter & { keep(documents: readonly ViewDocument[]): void } {
  const kept = new Map<string, ViewDocument>();
  return {
    collection: writer.collection,
    generation: writer.generation,
    commit: (documents, checkpoint) => writer.commit(documents, checkpoint),
    checkpoint: () => writer.checkpoint(),
    async getMany<T extends ViewDocument>(ids: string[]): Promise<Map<string, T>> {
      const found = new Map<string, T>();
      const missing: string[] = [];
      for (const id of ids) {
        const doc = kept.get(id);
        if (doc) found.set(id, doc as T);
        else missing.push(id);
      }
      if (missing.length) for (const [id, doc] of await writer.getMany<T>(missing)) found.set(id, doc);
      return found;
    },
    keep(documents) {
      for (const doc of documents) {
        kept.delete(doc._id);
        kept.set(doc._id, doc);
      }
      // The oldest go first, never those just kept: their commit may still be under way.
      for (const id of kept.keys()) {
        if (kept.size <= Math.max(limit, documents.length)) break;
        kept.delete(id);
      }
    },
  };
}
