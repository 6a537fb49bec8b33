import {
  DeadLetter,
  DeadLetterOptions,
  EventStore,
  laterPosition,
  LogPosition,
  Projection,
  ProjectionDaemon,
  ProjectionRunner,
  RequestWrites,
  ViewDocument,
  ViewProgress,
  ViewLeaseKeeper,
  ViewStore,
} from '@deals/kernel';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ServiceConfig } from './service-config';
import { defineViews } from './projections';

export const PROJECTIONS = Symbol('PROJECTIONS');

/** How often a store that cannot tell of checkpoints (MongoDB) is read while responses wait. */
const POLL_MS = 20;
/**
 * How long a response waits on notices (`ViewStore.onCheckpoints`) before the checkpoint is read
 * anyway, and again as often: a notice is lost while the listening connection reconnects.
 */
const FALLBACK_READ_MS = 500;
/** How many deferrals go by between two sweeps of the readers whose deferrals lapsed. */
const FORGET_LAPSED_EVERY = 1024;

interface Waiter {
  position: LogPosition;
  resolve: (reached: boolean) => void;
  since: number;
  timeout: NodeJS.Timeout;
}

interface CheckpointWatch {
  waiters: Set<Waiter>;
  /** The checkpoint as last read or heard of. */
  checkpoint: LogPosition | null;
  /** A read under way, shared by the waiters that ask for one meanwhile. */
  reading: Promise<void> | null;
  /** Polling (a store without notices). */
  polling: boolean;
  /** While responses wait on notices: reads the checkpoint for those that waited too long. */
  fallback: NodeJS.Timeout | null;
}

/**
 * Declares every view collection, runs the projections in the process that owns them, and lets
 * responses wait for their own events (read your writes): through the local runners (or daemon)
 * when there are, otherwise by watching the checkpoints that the worker process stores with the
 * views: told of them by the store where it can (PostgreSQL's notices), else polling.
 */
@Injectable()
export class ProjectionHost extends ViewProgress {
  private readonly logger = new Logger('Projections');
  private readonly runners = new Map<string, ProjectionRunner>();
  /** The one subscription that keeps the views, where they live on a server (see `startAll`). */
  private daemon: ProjectionDaemon | null = null;
  /** Where several processes keep the views: which of them this one keeps. */
  private leaseKeeper: ViewLeaseKeeper | null = null;
  /** Checkpoints of other processes' views being watched, with the responses waiting on each. */
  private readonly watches = new Map<string, CheckpointWatch>();
  /** Whether the store tells of checkpoints (undefined: not asked yet; asked on the first wait). */
  private notices: boolean | undefined;
  private stopNotices: (() => void) | null = null;
  private stopSwitches: (() => void) | null = null;
  private viewsByType: Map<string, string[]> | null = null;
  private readonly committedListeners = new Map<string, Array<(documents: readonly ViewDocument[]) => void>>();
  private readonly adoptedListeners = new Map<string, Array<() => void>>();
  /** Each reader's deferred writes: the views its next reads wait for, each up to a position, until a time. */
  private readonly deferred = new Map<string, { views: Map<string, LogPosition>; until: number }>();
  private deferrals = 0;
  private readonly deadLetterListeners: Array<(letter: DeadLetter) => void> = [];

  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    @Inject(PROJECTIONS) readonly projections: Projection[],
    private readonly config: ServiceConfig,
  ) {
    super();
  }

  /** Tells `listener` of each event this process's views set aside (see `DeadLetter`); register before `startAll`. */
  onDeadLetter(listener: (letter: DeadLetter) => void): void {
    this.deadLetterListeners.push(listener);
  }

  defineAll(): Promise<void> {
    return defineViews(this.views, this.projections);
  }

  /**
   * Starts keeping the views. Embedded (views in this process), a runner a projection, as ever: each
   * view's own subscription over the in-process log, whose pages cost nothing to read again, and a
   * slow view holds no other back. On a server (PostgreSQL, MongoDB), one daemon for them all: one
   * read of each page of the log and one commit a page, where a runner a view paid a round trip and
   * a transaction each. Where the store holds leases (PostgreSQL), the daemon keeps only the views
   * this process holds leases for, so that several worker processes divide the views among them
   * and take over a stopped one's. Decided here, where the process's views are started, by the
   * store's kind: the kernel offers both and the stores need not know who writes them.
   */
  async startAll(): Promise<void> {
    const logger = {
      log: (message: string) => this.logger.log(message),
      error: (message: string, error?: unknown) =>
        this.logger.error(error === undefined ? message : `${message}: ${error instanceof Error ? error.stack : String(error)}`),
    };
    const deadLetters: DeadLetterOptions = { onDeadLetter: (letter) => this.deadLetterListeners.forEach((listener) => listener(letter)) };
    if (!this.views.inProcess) {
      const leases = this.views.leases();
      const names = this.projections.map((p) => p.name);
      const keeper = leases ? new ViewLeaseKeeper(leases, names, logger) : null;
      const keep = keeper ? await keeper.first() : undefined;
      const daemon = new ProjectionDaemon(this.store, this.views, this.projections, logger, { keep, ...deadLetters });
      for (const [collection, listeners] of this.committedListeners)
        for (const listener of listeners) daemon.onCommitted(collection, listener);
      for (const [collection, listeners] of this.adoptedListeners) for (const listener of listeners) daemon.onAdopted(collection, listener);
      this.daemon = daemon;
      await daemon.start();
      if (keeper) {
        this.logger.log(`keeping ${keep!.length} of ${names.length} views (leases held as ${keeper.keeper})`);
        this.leaseKeeper = keeper;
        keeper.start(daemon);
      }
      return;
    }
    for (const projection of this.projections) {
      const runner = new ProjectionRunner(this.store, this.views, projection, logger, deadLetters);
      for (const listener of this.committedListeners.get(projection.name) ?? []) runner.onCommitted(listener);
      this.runners.set(projection.name, runner);
      await runner.start();
    }
  }

  /**
   * Tells `listener` of the documents each live batch of `collection` commits, in this process when
   * it runs that projection (see `ProjectionRunner.onCommitted`). Register before `startAll`.
   */
  onCommitted(collection: string, listener: (documents: readonly ViewDocument[]) => void): void {
    this.committedListeners.set(collection, [...(this.committedListeners.get(collection) ?? []), listener]);
    this.runners.get(collection)?.onCommitted(listener);
    this.daemon?.onCommitted(collection, listener);
  }

  /** See `ViewProgress.onAdopted`. Register before `startAll`. */
  onAdopted(collection: string, listener: () => void): void {
    this.adoptedListeners.set(collection, [...(this.adoptedListeners.get(collection) ?? []), listener]);
    this.daemon?.onAdopted(collection, listener);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.runners.values()].map((runner) => runner.stop()));
    this.runners.clear();
    await this.leaseKeeper?.stop();
    await this.daemon?.stop();
    await this.leaseKeeper?.leave();
    this.daemon = null;
    this.leaseKeeper = null;
    this.stopNotices?.();
    this.stopSwitches?.();
    this.stopNotices = this.stopSwitches = null;
  }

  async waitFor(collections: string[], position: LogPosition | null): Promise<void> {
    if (position === null) return;
    await Promise.all(collections.map((collection) => this.waitForView(collection, position)));
  }

  shows(collection: string, position: LogPosition | null): Promise<boolean> {
    return position === null ? Promise.resolve(true) : this.reached(collection, position, this.config.readYourWritesTimeoutMs);
  }

  async waitForWrites(writes: RequestWrites): Promise<void> {
    await Promise.all([...this.viewsOf(writes)].map(([collection, position]) => this.waitForView(collection, position)));
  }

  deferWrites(reader: string, writes: RequestWrites): void {
    const views = this.viewsOf(writes);
    if (views.size === 0) return;
    const until = Date.now() + this.config.readYourWritesTimeoutMs;
    let deferred = this.deferred.get(reader);
    if (!deferred) this.deferred.set(reader, (deferred = { views: new Map(), until }));
    deferred.until = until;
    for (const [collection, position] of views)
      deferred.views.set(collection, laterPosition(deferred.views.get(collection) ?? null, position)!);
    // Readers that never read again: their lapsed deferrals are forgotten now and then.
    if (++this.deferrals % FORGET_LAPSED_EVERY === 0)
      for (const [name, { until: lapses }] of this.deferred) if (lapses <= Date.now()) this.deferred.delete(name);
  }

  readerWaits(reader: string, views?: readonly string[]): Promise<void> | null {
    const deferred = this.deferred.get(reader);
    if (!deferred) return null;
    const left = deferred.until - Date.now();
    if (left <= 0) {
      this.deferred.delete(reader);
      return null;
    }
    const wanted = [...deferred.views].filter(([collection]) => !views || views.includes(collection));
    return wanted.length ? this.waitForDeferred(reader, deferred, wanted, left) : null;
  }

  private async waitForDeferred(
    reader: string,
    deferred: { views: Map<string, LogPosition> },
    wanted: Array<[string, LogPosition]>,
    left: number,
  ): Promise<void> {
    await Promise.all(
      wanted.map(async ([collection, position]) => {
        if (!(await this.reached(collection, position, left)))
          this.logger.warn(
            `view ${collection} did not reach ${position} within the bound after the write; the read goes on with what it holds`,
          );
        // Reached (or waited for as long as an answer would have): forgotten, unless deferred further meanwhile.
        if (deferred.views.get(collection) === position) deferred.views.delete(collection);
      }),
    );
    if (deferred.views.size === 0 && this.deferred.get(reader) === deferred) this.deferred.delete(reader);
  }

  /** Each view that shows a type `writes` wrote (those it shows already left out), up to the latest position written of the types it shows. */
  private viewsOf({ positions, shown }: RequestWrites): Map<string, LogPosition> {
    const upTo = new Map<string, LogPosition>();
    for (const [type, position] of positions)
      for (const name of this.showing().get(type) ?? [])
        if (!shown.has(name)) upTo.set(name, laterPosition(upTo.get(name) ?? null, position)!);
    return upTo;
  }

  private async waitForView(collection: string, position: LogPosition): Promise<void> {
    const timeout = this.config.readYourWritesTimeoutMs;
    const caughtUp = await this.reached(collection, position, timeout);
    if (!caughtUp) this.logger.warn(`view ${collection} did not reach ${position} within ${timeout} ms; answering with what it holds`);
  }

  /** The views that show each event type (those whose projection handles it). */
  private showing(): Map<string, string[]> {
    if (this.viewsByType) return this.viewsByType;
    const byType = new Map<string, string[]>();
    for (const { name, handles, answersWait } of this.projections) {
      if (answersWait === false) continue;
      for (const type of handles) byType.set(type, [...(byType.get(type) ?? []), name]);
    }
    return (this.viewsByType = byType);
  }

  /** The views that have not applied the log up to its head within `timeoutMs` (none: all caught up). */
  async lagging(timeoutMs: number): Promise<string[]> {
    const head = await this.store.head();
    if (head === null) return [];
    const reached = await Promise.all(this.projections.map(({ name }) => this.reached(name, head, timeoutMs)));
    return this.projections.filter((_, i) => !reached[i]).map((p) => p.name);
  }

  /** Waits until every view has applied everything in the log up to now. */
  async waitForAll(): Promise<void> {
    await this.waitFor(
      this.projections.map((p) => p.name),
      await this.store.head(),
    );
  }

  /** Resolves true once `collection` includes `position`, false after `timeout`: kept here, or by another process. */
  private reached(collection: string, position: LogPosition, timeout: number): Promise<boolean> {
    const runner = this.runners.get(collection);
    if (runner) return runner.waitFor(position, timeout);
    if (this.daemon?.keeps(collection)) {
      const deadline = Date.now() + timeout;
      // Null: the view's lease moved elsewhere meanwhile; its keeper's checkpoint says the rest.
      return this.daemon
        .waitFor(collection, position, timeout)
        .then((reached) => reached ?? this.watchCheckpoint(collection, position, Math.max(0, deadline - Date.now())));
    }
    return this.watchCheckpoint(collection, position, timeout);
  }

  /**
   * Waits until another process's checkpoint of `collection` reaches `position`. Where the store
   * tells of checkpoints, its notices release the waiters, and the checkpoint is read only after
   * {@link FALLBACK_READ_MS} without one (and at once when the listening connection opens again).
   * Otherwise, one read every {@link POLL_MS} serves every response waiting on that collection:
   * fifty purchases in flight would otherwise read it fifty times as often.
   */
  private watchCheckpoint(collection: string, position: LogPosition, timeout: number): Promise<boolean> {
    const notices = this.listenForCheckpoints();
    return new Promise((resolve) => {
      const watch = this.watchOf(collection);
      if (watch.checkpoint !== null && watch.checkpoint >= position) return resolve(true);
      const waiter: Waiter = {
        position,
        resolve,
        since: Date.now(),
        timeout: setTimeout(() => this.settle(watch, waiter, false), timeout),
      };
      waiter.timeout.unref();
      watch.waiters.add(waiter);
      if (notices) watch.fallback ??= setInterval(() => this.fallBack(collection, watch), FALLBACK_READ_MS).unref();
      else if (!watch.polling) void this.poll(collection, watch);
    });
  }

  private watchOf(collection: string): CheckpointWatch {
    let watch = this.watches.get(collection);
    if (!watch)
      this.watches.set(collection, (watch = { waiters: new Set(), checkpoint: null, reading: null, polling: false, fallback: null }));
    return watch;
  }

  /** Listens for the store's notices once (true), or learns that it has none (false). */
  private listenForCheckpoints(): boolean {
    if (this.notices !== undefined) return this.notices;
    this.stopNotices = this.views.onCheckpoints({
      reached: (collection, position) => {
        const watch = this.watchOf(collection);
        this.heard(watch, position);
      },
      resync: () => {
        for (const [collection, watch] of this.watches) if (watch.waiters.size) void this.read(collection, watch);
      },
    });
    this.notices = this.stopNotices !== null;
    // A rebuilt generation starts from its own checkpoint: what was heard of the old one no longer holds.
    this.stopSwitches = this.views.onGenerationSwitch((collection) => {
      const watch = this.watches.get(collection);
      if (!watch) return;
      watch.checkpoint = null;
      if (watch.waiters.size) void this.read(collection, watch);
    });
    return this.notices;
  }

  /** Reads the checkpoint (one read at a time a collection) and releases whom it satisfies. */
  private read(collection: string, watch: CheckpointWatch): Promise<void> {
    // Begun in a promise: a store closed meanwhile (the service stopping) throws, and that is a failed read too.
    watch.reading ??= Promise.resolve()
      .then(() => this.views.writer(collection).checkpoint())
      .then(
        (checkpoint) => this.heard(watch, checkpoint),
        () => undefined, // read again on the next turn; the waiters' deadlines bound the wait
      )
      .finally(() => (watch.reading = null));
    return watch.reading;
  }

  private heard(watch: CheckpointWatch, checkpoint: LogPosition | null): void {
    watch.checkpoint = laterPosition(watch.checkpoint, checkpoint);
    if (watch.checkpoint === null) return;
    for (const waiter of watch.waiters) if (watch.checkpoint >= waiter.position) this.settle(watch, waiter, true);
  }

  private settle(watch: CheckpointWatch, waiter: Waiter, reached: boolean): void {
    if (!watch.waiters.delete(waiter)) return;
    clearTimeout(waiter.timeout);
    waiter.resolve(reached);
  }

  /** Reads the checkpoint when a response has waited {@link FALLBACK_READ_MS} for a notice; stops once none waits. */
  private fallBack(collection: string, watch: CheckpointWatch): void {
    if (watch.waiters.size === 0) {
      clearInterval(watch.fallback!);
      watch.fallback = null;
      return;
    }
    const since = Date.now() - FALLBACK_READ_MS;
    for (const waiter of watch.waiters)
      if (waiter.since <= since) {
        void this.read(collection, watch);
        return;
      }
  }

  /** Reads the checkpoint every {@link POLL_MS} while responses wait (a store without notices). */
  private async poll(collection: string, watch: CheckpointWatch): Promise<void> {
    watch.polling = true;
    try {
      while (watch.waiters.size) {
        await this.read(collection, watch);
        if (watch.waiters.size) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } finally {
      watch.polling = false;
    }
  }
}
