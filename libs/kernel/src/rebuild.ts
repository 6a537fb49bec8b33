import { applyOneByOne, deadLetterCollection, defineDeadLetters, FoldError } from './dead-letters';
import { Projection } from './projection';
import { foldBatch } from './projection-runner';
import { EventStore, LogPosition, RecordedEvent } from './ports/event-store.port';
import { readTypes } from './ports/event-store.capabilities';
import { RebuildTarget, ViewDocument, ViewStore, ViewWriter } from './ports/view-store.port';

export interface RebuildProgress {
  /** Events the views handle, folded so far. */
  applied: number;
  total: number | null;
  position: LogPosition | null;
  /** Events set aside as dead letters (summed over the views). */
  setAside: number;
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
 *
 * Each view's dead letters are rebuilt with it, into a fresh generation activated right after the
 * view's: a page that fails (its fold, or its commit) is applied again an event at a time
 * (`applyOneByOne`), and an event that fails again is set aside there. So the letters of events
 * the views apply now are gone after the switch and those that still fail are recorded again. A
 * store that refuses even a letter fails the rebuild, as before.
 */
export async function rebuildProjections(
  store: EventStore,
  views: ViewStore,
  projections: Projection[],
  onProgress: (progress: RebuildProgress) => void = () => undefined,
  pageSize = 2000,
  keep = REBUILD_KEEPS,
  now: () => Date = () => new Date(),
): Promise<RebuildProgress> {
  await defineDeadLetters(
    views,
    projections.map((p) => p.name),
  );
  // Each view's generation, then its letters': activated in this order.
  const targets = await Promise.all(
    projections.flatMap((p) => [views.beginRebuild(p.name), views.beginRebuild(deadLetterCollection(p.name))]),
  );
  const viewTargets = targets.filter((_, i) => i % 2 === 0);
  const letterTargets = targets.filter((_, i) => i % 2 === 1);
  const progress: RebuildProgress = { applied: 0, total: null, position: null, setAside: 0 };
  const types = [...new Set(projections.flatMap((p) => p.handles))];
  const readers = viewTargets.map((target) => cachedWriter(target, keep));
  /** Applies a page again an event at a time, over the documents as stored (see `applyOneByOne`). */
  const setAside = async (events: readonly RecordedEvent[], through: LogPosition): Promise<void> => {
    for (const reader of readers) reader.forgetAll();
    for (const [i, projection] of projections.entries()) {
      const target = { projection, writer: viewTargets[i], letters: letterTargets[i], views, now };
      progress.setAside += (await applyOneByOne(foldBatch, target, events, through)).letters.length;
    }
  };
  let activated = 0;
  try {
    const read = (after: LogPosition | null) => readTypes(store, { after, maxCount: pageSize, types });
    const foldToEnd = () => foldPages(read, progress, readers, viewTargets, views, setAside, onProgress, projections);
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

type CachedWriter = ReturnType<typeof cachedWriter>;

/** Folds and commits the log from where the rebuild is to its end as it reads it now. */
async function foldPages(
  read: (after: LogPosition | null) => Promise<{ events: RecordedEvent[]; through: LogPosition | null }>,
  progress: RebuildProgress,
  readers: CachedWriter[],
  targets: RebuildTarget[],
  views: ViewStore,
  setAside: (events: readonly RecordedEvent[], through: LogPosition) => Promise<void>,
  onProgress: (progress: RebuildProgress) => void,
  projections: Projection[],
): Promise<void> {
  let next = read(progress.position);
  // The last page's commit, under way while the next page folds: the documents it writes are kept, so no fold reads them back.
  let committing: Promise<void> = Promise.resolve();
  let inFlight: { events: readonly RecordedEvent[]; through: LogPosition } | null = null;
  /** Awaits the last page's commit; true when it failed and that page was applied again event by event. */
  const settle = async (): Promise<boolean> => {
    const page = inFlight;
    inFlight = null;
    try {
      await committing;
      return false;
    } catch (error) {
      if (!page) throw error;
      await setAside(page.events, page.through);
      return true;
    } finally {
      committing = Promise.resolve();
    }
  };
  try {
    for (;;) {
      const page = await next;
      if (page.through === progress.position) break;
      const through = page.through as LogPosition;
      next = read(through);
      // Awaited at the top of the loop, or dropped below when the fold fails.
      next.catch(() => undefined);
      const folded = await Promise.all(projections.map((p, i) => foldBatch(p, readers[i], page.events))).catch((error: unknown) => {
        if (error instanceof FoldError) return null;
        throw error;
      });
      // Folded over the last page's documents: when their commit failed, this page is applied again too.
      if ((await settle()) || folded === null) await setAside(page.events, through);
      else {
        folded.forEach((documents, i) => readers[i].keep(documents));
        inFlight = { events: page.events, through };
        committing = views.commitAll(targets.map((writer, i) => ({ writer, documents: folded[i], checkpoint: through })));
        committing.catch(() => undefined);
      }
      progress.applied += page.events.length;
      progress.position = through;
      onProgress(progress);
    }
  } finally {
    await committing.catch(() => undefined);
  }
  await settle();
}

/**
 * A rebuild's writer that keeps the documents folded (up to `limit`, or the last page's when more;
 * the newest kept), and reads only the others from the store, whose commits have ended.
 */
function cachedWriter(
  writer: ViewWriter,
  limit: number,
): ViewWriter & { keep(documents: readonly ViewDocument[]): void; forgetAll(): void } {
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
    forgetAll: () => kept.clear(),
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
