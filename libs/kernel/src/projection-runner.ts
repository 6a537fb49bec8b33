import {
  applyOneByOne,
  deadLetterCollection,
  DeadLetterOptions,
  defineDeadLetters,
  FoldError,
  PoisonWatch,
  reportDeadLetters,
} from './dead-letters';
import { applyEvents, BatchDocuments, Projection, touchedIds } from './projection';
import { EventStore, LogPosition, LogSubscription, RecordedEvent } from './ports/event-store.port';
import { ViewDocument, ViewStore, ViewWriter } from './ports/view-store.port';
import { PositionWaiters } from './position-waiters';

export interface RunnerLogger {
  log(message: string): void;
  error(message: string, error?: unknown): void;
}

/**
 * Folds one batch over a writer's stored documents (those it touches, read once); the documents it
 * changes, not committed. A fold that throws is a `FoldError`; a read of the store that fails is thrown as it came.
 */
export async function foldBatch(projection: Projection, writer: ViewWriter, events: readonly RecordedEvent[]): Promise<ViewDocument[]> {
  if (projection.applyBatch) {
    const handled = new Set(projection.handles);
    const mine = events.filter((event) => handled.has(event.type));
    if (!mine.length) return [];
    const reads = new WeakSet<object>();
    try {
      return await projection.applyBatch(mine, batchDocuments(writer, reads));
    } catch (error) {
      throw typeof error === 'object' && error !== null && reads.has(error) ? error : new FoldError(error);
    }
  }
  const ids = folded(() => touchedIds(projection, events));
  const current = ids.length ? await writer.getMany(ids) : new Map();
  return folded(() => applyEvents(projection, current, events));
}

/** What `fold` returns; what it throws, as a `FoldError`. */
function folded<T>(fold: () => T): T {
  try {
    return fold();
  } catch (error) {
    throw new FoldError(error);
  }
}

/** Applies one batch to a writer: load touched documents, fold, commit with the checkpoint; the documents committed. */
async function applyBatch(projection: Projection, writer: ViewWriter, events: readonly RecordedEvent[]): Promise<readonly ViewDocument[]> {
  if (events.length === 0) return [];
  const documents = await foldBatch(projection, writer, events);
  await writer.commit(documents, events[events.length - 1].position);
  return documents;
}

/** The stored documents a batch reads, each read from the writer once; a read's failure is added to `failures`. */
function batchDocuments(writer: ViewWriter, failures: WeakSet<object>): BatchDocuments<ViewDocument> {
  const seen = new Map<string, ViewDocument | null>();
  return {
    async get(ids) {
      const missing = ids.filter((id) => !seen.has(id));
      if (missing.length) {
        const stored = await writer.getMany(missing).catch((error: unknown) => {
          if (typeof error === 'object' && error !== null) failures.add(error);
          throw error;
        });
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
  private readonly poison: PoisonWatch;

  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    readonly projection: Projection,
    private readonly logger: RunnerLogger,
    private readonly options: DeadLetterOptions = {},
  ) {
    this.poison = new PoisonWatch(options.isolateAfter);
  }

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
        const documents = await this.applyOrSetAside(writer, events);
        this.position = events[events.length - 1].position;
        this.release();
        if (documents.length) for (const listener of this.committedListeners) listener(documents);
      },
      onError: (error) => this.logger.error(`projection ${this.projection.name} failed; retrying`, error),
    });
  }

  /**
   * Applies a batch; once it failed as {@link PoisonWatch} says, applies its events one at a time,
   * setting aside those that cannot be applied (see `applyOneByOne`), so that no event holds the view back.
   */
  private async applyOrSetAside(writer: ViewWriter, events: readonly RecordedEvent[]): Promise<readonly ViewDocument[]> {
    try {
      const documents = await applyBatch(this.projection, writer, events);
      this.poison.passed();
      return documents;
    } catch (error) {
      if (!this.poison.failed(events, error)) throw error;
    }
    const name = this.projection.name;
    await defineDeadLetters(this.views, [name]);
    const target = { projection: this.projection, writer, letters: this.views.writer(deadLetterCollection(name)), views: this.views };
    const done = await applyOneByOne(
      foldBatch,
      { ...target, now: this.options.now ?? (() => new Date()) },
      events,
      events[events.length - 1].position,
    );
    this.poison.passed();
    reportDeadLetters(done.letters, this.logger, this.options);
    return done.documents;
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
