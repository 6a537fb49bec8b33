import { applyOneByOne, deadLetterCollection, DeadLetterOptions, defineDeadLetters, reportDeadLetters, PoisonWatch } from './dead-letters';
import { Projection } from './projection';
import { PositionWaiters } from './position-waiters';
import { foldBatch, RunnerLogger } from './projection-runner';
import { EventStore, laterPosition, LogPosition, LogSubscription, RecordedEvent } from './ports/event-store.port';
import { ViewBatch, ViewDocument, ViewStore } from './ports/view-store.port';
import { RememberingWriter } from './remembering-writer';

/** How often, at most, the checkpoints of views that changed nothing are stored while pages come. */
const IDLE_CHECKPOINT_MS = 1000;
/** Wait before reading a rebuilt generation's checkpoint again. */
const RETRY_MS = 500;

export interface DaemonOptions extends DeadLetterOptions {
  /** See {@link IDLE_CHECKPOINT_MS}. */
  idleCheckpointMs?: number;
  /** The projections kept from the start (all by default); see {@link ProjectionDaemon.keepOnly}. */
  keep?: readonly string[];
}

/** One projection as the daemon keeps it. */
interface Kept {
  readonly projection: Projection;
  readonly handled: ReadonlySet<string>;
  /** Remembers what it committed: the daemon is the one that folds the view. */
  writer: RememberingWriter;
  /** The view includes the log up to here: committed by this daemon, or read from the store. */
  applied: LogPosition | null;
  /** The checkpoint stored, as far as this daemon knows (behind `applied` while the view changed nothing). */
  stored: LogPosition | null;
  waiters: PositionWaiters;
}

/**
 * Keeps several projections' active generations caught up with the log through one subscription:
 * where the views live on a server (PostgreSQL), one read of each page of the log and one commit a
 * page for all the views, instead of a subscription, a read and a commit per view.
 *
 * Each page: every projection folds the events past its own checkpoint (as `ProjectionRunner`
 * does), and one `ViewStore.commitAll` writes every changed document with the checkpoints of the
 * projections that handled events of the page. The others' checkpoints go into that commit at most
 * every {@link IDLE_CHECKPOINT_MS} (a restart replays at most that much for them), in every commit
 * of a page no projection handles (it would otherwise commit nothing), a while after the last page,
 * and at stop. Documents keep their `_pos` guard and checkpoints never go back, so a page applied
 * twice (a retried failure, a restart) changes nothing.
 *
 * A rebuild activated elsewhere (`onGenerationSwitch`) restarts the subscription: the switched
 * projection from its new generation's checkpoint, the others from where they are; the daemon reads
 * from the lowest of them, and each projection skips the events it already holds. A projection
 * taken on while running (`keepOnly`, a view's lease moving here) joins the same way.
 */
export class ProjectionDaemon {
  private readonly projections = new Map<string, Projection>();
  private readonly kept = new Map<string, Kept>();
  private readonly committedListeners = new Map<string, Array<(documents: readonly ViewDocument[]) => void>>();
  private readonly adoptedListeners = new Map<string, Array<() => void>>();
  private subscription: LogSubscription | null = null;
  private stopSwitchListener: (() => void) | null = null;
  private restarting: Promise<void> = Promise.resolve();
  /** Collections switched to a rebuilt generation or taken on, waiting for the restart that reads their checkpoints. */
  private readonly toRead = new Set<string>();
  /** Collections taken on whose checkpoints are not read yet. */
  private readonly adopting = new Set<string>();
  private stopped = false;
  private idleStoredAt = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly idleCheckpointMs: number;
  private readonly poison: PoisonWatch;

  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    projections: readonly Projection[],
    private readonly logger: RunnerLogger,
    private readonly options: DaemonOptions = {},
  ) {
    this.idleCheckpointMs = options.idleCheckpointMs ?? IDLE_CHECKPOINT_MS;
    this.poison = new PoisonWatch(options.isolateAfter);
    for (const projection of projections) this.projections.set(projection.name, projection);
    for (const name of options.keep ?? this.projections.keys()) this.kept.set(name, this.keeping(name, null));
  }

  private keeping(name: string, checkpoint: LogPosition | null, writer?: RememberingWriter): Kept {
    const projection = this.projections.get(name);
    if (!projection) throw new Error(`projection ${name} is not one of this daemon's`);
    return {
      projection,
      handled: new Set(projection.handles),
      writer: writer ?? new RememberingWriter(this.views.writer(name)),
      applied: checkpoint,
      stored: checkpoint,
      waiters: new PositionWaiters(),
    };
  }

  async start(): Promise<void> {
    this.stopSwitchListener = this.views.onGenerationSwitch((collection) => {
      if (this.kept.has(collection)) this.readAgain(collection);
    });
    const all = [...this.kept.values()];
    const stored = await Promise.all(all.map((kept) => kept.writer.checkpoint()));
    all.forEach((kept, i) => (kept.applied = kept.stored = stored[i]));
    this.subscribe();
  }

  /**
   * Keeps exactly these projections from now on: the others are dropped at once (their waits end
   * with null), the new ones join from their stored checkpoints once read (`onAdopted` then tells).
   * Resolves once the new ones are kept.
   */
  keepOnly(names: readonly string[]): Promise<void> {
    const wanted = new Set(names);
    for (const [name, kept] of this.kept)
      if (!wanted.has(name)) {
        this.kept.delete(name);
        kept.waiters.abandon();
      }
    for (const name of this.adopting) if (!wanted.has(name)) this.adopting.delete(name);
    for (const name of wanted)
      if (!this.kept.has(name) && !this.adopting.has(name)) {
        if (!this.projections.has(name)) throw new Error(`projection ${name} is not one of this daemon's`);
        this.adopting.add(name);
        this.readAgain(name);
      }
    return this.restarting;
  }

  /** Whether this daemon keeps `projection`'s view. */
  keeps(projection: string): boolean {
    return this.kept.has(projection);
  }

  /** The projections kept now. */
  keptNames(): string[] {
    return [...this.kept.keys()];
  }

  /** Position `projection`'s view has applied up to, as far as this process knows. */
  caughtUpTo(projection: string): LogPosition | null {
    return this.get(projection).applied;
  }

  /** As `ProjectionRunner.onCommitted`, for one of the projections, whenever this daemon keeps it. */
  onCommitted(projection: string, listener: (documents: readonly ViewDocument[]) => void): void {
    this.committedListeners.set(projection, [...(this.committedListeners.get(projection) ?? []), listener]);
  }

  /** Tells `listener` each time `projection` is taken on while running (not at start). */
  onAdopted(projection: string, listener: () => void): void {
    this.adoptedListeners.set(projection, [...(this.adoptedListeners.get(projection) ?? []), listener]);
  }

  /**
   * Resolves true once `projection`'s view includes `position`, false after `timeoutMs`, null if the
   * daemon stops keeping it first.
   */
  waitFor(projection: string, position: LogPosition, timeoutMs: number): Promise<boolean | null> {
    const kept = this.kept.get(projection);
    if (!kept) return Promise.resolve(null);
    return kept.waiters.wait(kept.applied, position, timeoutMs);
  }

  /** Stops reading the log, then stores the checkpoints left behind (a restart then replays nothing). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopSwitchListener?.();
    await this.restarting;
    await this.subscription?.close();
    this.subscription = null;
    this.clearIdleTimer();
    await this.storeIdleCheckpoints();
  }

  private get(projection: string): Kept {
    const kept = this.kept.get(projection);
    if (!kept) throw new Error(`projection ${projection} is not kept by this daemon`);
    return kept;
  }

  /** Reads `collection`'s checkpoint again before the next page (a generation switched, a view taken on). */
  private readAgain(collection: string): void {
    if (this.toRead.size === 0) this.restarting = this.restarting.then(() => this.restart());
    this.toRead.add(collection);
  }

  private subscribe(): void {
    const all = [...this.kept.values()];
    if (all.length === 0) return; // nothing to keep: no reading of the log
    // From the lowest checkpoint (null, the start of the log, is the lowest).
    const from = all.some((k) => k.applied === null)
      ? null
      : all.reduce<LogPosition | null>((low, k) => (low === null || k.applied! < low ? k.applied : low), null);
    for (const kept of all) this.release(kept);
    this.subscription = this.store.subscribe({
      after: from,
      onEvents: (events) => this.applyPage(events),
      onError: (error) => this.logger.error('projections failed; retrying', error),
    });
  }

  /**
   * Folds a page into every view that has not applied it yet and commits them all in one step; once
   * it failed as {@link PoisonWatch} says, applies it view by view, an event at a time (`setAside`).
   */
  private async applyPage(events: readonly RecordedEvent[]): Promise<void> {
    try {
      await this.foldAndCommit(events);
      this.poison.passed();
      return;
    } catch (error) {
      // A projection may have changed a remembered document in place, and the commit may have happened in part.
      for (const kept of this.kept.values()) kept.writer.forgetAll();
      if (!this.poison.failed(events, error)) throw error;
    }
    await this.setAside(events);
    this.poison.passed();
  }

  /**
   * Applies a page to each view that has not applied it, an event at a time, setting aside the
   * events a view cannot apply (see `applyOneByOne`); a store that is down fails it (retried as
   * ever: the views done stay done).
   */
  private async setAside(events: readonly RecordedEvent[]): Promise<void> {
    const end = events[events.length - 1].position;
    await defineDeadLetters(this.views, [...this.kept.keys()]);
    for (const kept of [...this.kept.values()]) {
      if (kept.applied !== null && kept.applied >= end) continue;
      const name = kept.projection.name;
      const mine = kept.applied === null ? events : events.filter((event) => event.position > kept.applied!);
      const letters = this.views.writer(deadLetterCollection(name));
      const target = {
        projection: kept.projection,
        writer: kept.writer,
        letters,
        views: this.views,
        now: this.options.now ?? (() => new Date()),
      };
      const done = await applyOneByOne(foldBatch, target, mine, end);
      [kept.applied, kept.stored] = [end, laterPosition(kept.stored, end)];
      reportDeadLetters(done.letters, this.logger, this.options);
      this.release(kept);
      if (done.documents.length) for (const listener of this.committedListeners.get(name) ?? []) listener(done.documents);
    }
  }

  private async foldAndCommit(events: readonly RecordedEvent[]): Promise<void> {
    const end = events[events.length - 1].position;
    const folded = await Promise.all(
      [...this.kept.values()].map(async (kept) => {
        const start = kept.applied === null ? 0 : events.findIndex((event) => event.position > kept.applied!);
        if (start < 0) return null;
        const mine = start === 0 ? events : events.slice(start);
        const handles = mine.some((event) => kept.handled.has(event.type));
        const documents = handles ? await foldBatch(kept.projection, kept.writer, mine) : [];
        return { kept, handles, documents };
      }),
    );
    const moved = folded.filter((f) => f !== null);
    if (moved.length === 0) return;
    const now = Date.now();
    // Where the store tells every process of each checkpoint committed, a checkpoint is stored at most
    // every interval (and a while after the last page). Elsewhere a waiting answer reads stored ones:
    // each view that handled events stores its own (every view, where the store writes them all at
    // once), and a page no view handles stores them all, else nothing would say the views reached it.
    const told = this.views.tellsOfCheckpoints;
    const storeIdle =
      now - this.idleStoredAt >= this.idleCheckpointMs ||
      (!told && (this.views.storesCheckpointsTogether || !moved.some((f) => f.handles)));
    const batches: ViewBatch[] = moved.map(({ kept, handles, documents }) => ({
      writer: kept.writer,
      documents,
      checkpoint: end,
      store: storeIdle || (handles && !told),
    }));
    await this.views.commitAll(batches);
    for (const { kept, documents } of moved) kept.writer.remember(documents);
    if (storeIdle) this.idleStoredAt = now;
    moved.forEach(({ kept }, i) => {
      kept.applied = end;
      if (batches[i].store) kept.stored = laterPosition(kept.stored, end);
    });
    for (const { kept, documents } of moved) {
      this.release(kept);
      if (documents.length) for (const listener of this.committedListeners.get(kept.projection.name) ?? []) listener(documents);
    }
    if (!storeIdle) this.armIdleTimer();
  }

  /** Stores, a while after a page, the checkpoints that page left behind (the view changed nothing up to them). */
  private armIdleTimer(): void {
    if (this.idleTimer || this.stopped) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      void this.storeIdleCheckpoints();
    }, this.idleCheckpointMs);
    this.idleTimer.unref();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /**
   * Stores every checkpoint behind what its view holds, with no document: safe beside a page's
   * commit (a checkpoint never goes back). A failure (a generation replaced meanwhile) is left to
   * the next page's commit.
   */
  private async storeIdleCheckpoints(): Promise<void> {
    const behind = [...this.kept.values()].filter((k) => k.applied !== null && (k.stored === null || k.stored < k.applied));
    if (behind.length === 0) return;
    const batches = behind.map((kept) => ({ kept, writer: kept.writer, documents: [], checkpoint: kept.applied! }));
    try {
      await this.views.commitAll(batches);
      this.idleStoredAt = Date.now();
      for (const { kept, writer, checkpoint } of batches) if (kept.writer === writer) kept.stored = laterPosition(kept.stored, checkpoint);
    } catch (error) {
      this.logger.error('storing the checkpoints of views that changed nothing failed; the next page stores them', error);
    }
  }

  /**
   * Subscribes again once the checkpoints to read again are read: a switched projection's of its
   * new generation, a taken-on projection's as stored.
   */
  private async restart(): Promise<void> {
    if (this.stopped) return;
    await this.subscription?.close();
    this.subscription = null;
    const toRead = [...this.toRead];
    this.toRead.clear();
    for (const kept of this.kept.values())
      if (!toRead.includes(kept.projection.name)) kept.writer = new RememberingWriter(this.views.writer(kept.projection.name));
    // Until each checkpoint is read, no page: one applied past it would skip events for good.
    // A writer changes with its position, so that no idle store writes the old position to a new generation.
    for (const name of toRead) {
      const adopted = this.adopting.has(name);
      if (!adopted && !this.kept.has(name)) continue; // dropped meanwhile
      const writer = new RememberingWriter(this.views.writer(name));
      for (;;) {
        try {
          const checkpoint = await writer.checkpoint();
          const kept = this.kept.get(name);
          if (kept) [kept.writer, kept.applied, kept.stored] = [writer, checkpoint, checkpoint];
          else if (this.adopting.delete(name)) this.kept.set(name, this.keeping(name, checkpoint, writer));
          break;
        } catch (error) {
          this.logger.error(`projection ${name}: reading its checkpoint failed; retrying`, error);
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
          if (this.stopped) return;
        }
      }
      if (!adopted) this.logger.log(`projection ${name}: switched to a rebuilt generation`);
      else if (this.kept.has(name)) for (const listener of this.adoptedListeners.get(name) ?? []) listener();
    }
    if (!this.stopped) this.subscribe();
  }

  private release(kept: Kept): void {
    kept.waiters.reached(kept.applied);
  }
}
