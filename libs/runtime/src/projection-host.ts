import {
  EventStore,
  laterPosition,
  LogPosition,
  Projection,
  ProjectionRunner,
  RequestWrites,
  ViewDocument,
  ViewProgress,
  ViewStore,
} from '@deals/kernel';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ServiceConfig } from './service-config';
import { defineViews } from './projections';

export const PROJECTIONS = Symbol('PROJECTIONS');

const POLL_MS = 20;

interface CheckpointWatch {
  waiters: Set<{ position: LogPosition; deadline: number; resolve: (reached: boolean) => void }>;
  /** The checkpoint as last read. */
  checkpoint: LogPosition | null;
}

/**
 * Declares every view collection, runs the projections in the process that owns them, and lets
 * responses wait for their own events (read your writes): through the local runner when there is
 * one, otherwise by watching the checkpoints that the worker process stores with the views.
 */
@Injectable()
export class ProjectionHost extends ViewProgress {
  private readonly logger = new Logger('Projections');
  private readonly runners = new Map<string, ProjectionRunner>();
  /** Checkpoints of other processes' views being watched, with the responses waiting on each. */
  private readonly watches = new Map<string, CheckpointWatch>();
  private viewsByType: Map<string, string[]> | null = null;
  private readonly committedListeners = new Map<string, Array<(documents: readonly ViewDocument[]) => void>>();

  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    @Inject(PROJECTIONS) readonly projections: Projection[],
    private readonly config: ServiceConfig,
  ) {
    super();
  }

  defineAll(): Promise<void> {
    return defineViews(this.views, this.projections);
  }

  async startAll(): Promise<void> {
    for (const projection of this.projections) {
      const runner = new ProjectionRunner(this.store, this.views, projection, {
        log: (message) => this.logger.log(message),
        error: (message, error) => this.logger.error(`${message}: ${error instanceof Error ? error.stack : String(error)}`),
      });
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
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.runners.values()].map((runner) => runner.stop()));
    this.runners.clear();
  }

  async waitFor(collections: string[], position: LogPosition | null): Promise<void> {
    if (position === null) return;
    await Promise.all(collections.map((collection) => this.waitForView(collection, position)));
  }

  async waitForWrites({ positions }: RequestWrites): Promise<void> {
    if (positions.size === 0) return;
    // Each view, up to the latest position written of the types it shows.
    const upTo = new Map<string, LogPosition>();
    for (const [type, position] of positions)
      for (const name of this.showing().get(type) ?? []) upTo.set(name, laterPosition(upTo.get(name) ?? null, position)!);
    await Promise.all([...upTo].map(([collection, position]) => this.waitForView(collection, position)));
  }

  private async waitForView(collection: string, position: LogPosition): Promise<void> {
    const timeout = this.config.readYourWritesTimeoutMs;
    const runner = this.runners.get(collection);
    const caughtUp = runner ? await runner.waitFor(position, timeout) : await this.pollCheckpoint(collection, position, timeout);
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
    const reached = await Promise.all(
      this.projections.map(async ({ name }) => {
        const runner = this.runners.get(name);
        return runner ? runner.waitFor(head, timeoutMs) : this.pollCheckpoint(name, head, timeoutMs);
      }),
    );
    return this.projections.filter((_, i) => !reached[i]).map((p) => p.name);
  }

  /** Waits until every view has applied everything in the log up to now. */
  async waitForAll(): Promise<void> {
    await this.waitFor(
      this.projections.map((p) => p.name),
      await this.store.head(),
    );
  }

  /**
   * Waits until another process's checkpoint of `collection` reaches `position`. One read of the
   * checkpoint every {@link POLL_MS} serves every response waiting on that collection: fifty
   * purchases in flight would otherwise read it fifty times as often.
   */
  private pollCheckpoint(collection: string, position: LogPosition, timeout: number): Promise<boolean> {
    return new Promise((resolve) => {
      let watch = this.watches.get(collection);
      if (!watch) this.watches.set(collection, (watch = { waiters: new Set(), checkpoint: null }));
      if (watch.checkpoint !== null && watch.checkpoint >= position) return resolve(true);
      const waiter = { position, deadline: Date.now() + timeout, resolve };
      watch.waiters.add(waiter);
      if (watch.waiters.size === 1) void this.watch(collection, watch);
    });
  }

  private async watch(collection: string, watch: CheckpointWatch): Promise<void> {
    while (watch.waiters.size) {
      try {
        watch.checkpoint = await this.views.writer(collection).checkpoint();
      } catch {
        // Read again on the next turn; the waiters' deadlines bound the wait.
      }
      const now = Date.now();
      for (const waiter of watch.waiters) {
        const reached = watch.checkpoint !== null && watch.checkpoint >= waiter.position;
        if (reached || now >= waiter.deadline) {
          watch.waiters.delete(waiter);
          waiter.resolve(reached);
        }
      }
      if (watch.waiters.size) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
