import { LogPosition } from './ports/event-store.port';
import { ViewDocument, ViewWriter } from './ports/view-store.port';
import { RecentMap } from './recent-map';

/**
 * Documents (and absences) a writer remembers, by default: enough for a few hundred purchases in
 * flight, and at most some tens of MB for a worker's ~20 views of a few kB a document.
 */
export const REMEMBERED_DOCUMENTS = 2048;

/**
 * A view writer that remembers the documents it committed and those it read (an id found nowhere
 * too), so that folding the next pages reads from the store only the documents it has not met.
 *
 * Sound only where this writer's owner is the one that folds the view: a document changed by
 * another process would be seen here as it was. The `ProjectionDaemon` is that owner on a server's
 * views (the API replicas fold none); another daemon folding the same log in the same order writes
 * the same documents, so a second one running for a while changes nothing either. Whatever an
 * owner folded but could not commit is forgotten with {@link forgetAll}, since a projection may
 * have changed a remembered document in place.
 */
export class RememberingWriter implements ViewWriter {
  private known: RecentMap<string, ViewDocument | null>;

  constructor(
    readonly inner: ViewWriter,
    private readonly capacity = REMEMBERED_DOCUMENTS,
  ) {
    this.known = new RecentMap(capacity);
  }

  get collection(): string {
    return this.inner.collection;
  }

  get generation(): string {
    return this.inner.generation;
  }

  async getMany<T extends ViewDocument>(ids: string[]): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    const missing: string[] = [];
    for (const id of ids) {
      const doc = this.known.get(id);
      if (doc === undefined) missing.push(id);
      else if (doc !== null) found.set(id, doc as T);
    }
    if (missing.length === 0) return found;
    const stored = await this.inner.getMany<T>(missing);
    for (const id of missing) {
      const doc = stored.get(id);
      this.known.set(id, doc ?? null);
      if (doc) found.set(id, doc);
    }
    return found;
  }

  async commit<T extends ViewDocument>(documents: readonly T[], checkpoint: LogPosition): Promise<void> {
    try {
      await this.inner.commit(documents, checkpoint);
    } catch (error) {
      this.forgetAll();
      throw error;
    }
    this.remember(documents);
  }

  checkpoint(): Promise<LogPosition | null> {
    return this.inner.checkpoint();
  }

  /** The documents as committed (by a commit across views made elsewhere). */
  remember(documents: readonly ViewDocument[]): void {
    for (const doc of documents) this.known.set(doc._id, doc);
  }

  /** Reads every document from the store again (after a commit that may not have happened). */
  forgetAll(): void {
    this.known = new RecentMap(this.capacity);
  }
}
