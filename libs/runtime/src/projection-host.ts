import { EventStore, LogPosition, Projection, ProjectionRunner, ViewProgress, ViewStore } from '@deals/kernel';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ServiceConfig } from './service-config';

export const PROJECTIONS = Symbol('PROJECTIONS');

const POLL_MS = 20;

/**
 * Declares every view collection, runs the projections in the process that owns them, and lets
 * responses wait for their own events (read your writes): through the local runner when there is
 * one, otherwise by watching the checkpoints that the worker process stores with the views.
 */
@Injectable()
export class ProjectionHost extends ViewProgress {
  private readonly logger = new Logger('Projections');
  private readonly runners = new Map<string, ProjectionRunner>();

  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    @Inject(PROJECTIONS) readonly projections: Projection[],
    private readonly config: ServiceConfig,
  ) {
    super();
  }

  async defineAll(): Promise<void> {
    for (const projection of this.projections) await this.views.define(projection.name, projection.indexes);
  }

  async startAll(): Promise<void> {
    for (const projection of this.projections) {
      const runner = new ProjectionRunner(this.store, this.views, projection, {
        log: (message) => this.logger.log(message),
        error: (message, error) => this.logger.error(`${message}: ${error instanceof Error ? error.stack : String(error)}`),
      });
      this.runners.set(projection.name, runner);
      await runner.start();
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.runners.values()].map((runner) => runner.stop()));
    this.runners.clear();
  }

  async waitFor(collections: string[], position: LogPosition | null): Promise<void> {
    if (position === null) return;
    const timeout = this.config.readYourWritesTimeoutMs;
    await Promise.all(
      collections.map(async (collection) => {
        const runner = this.runners.get(collection);
        const caughtUp = runner ? await runner.waitFor(position, timeout) : await this.pollCheckpoint(collection, position, timeout);
        if (!caughtUp) this.logger.warn(`view ${collection} did not reach ${position} within ${timeout} ms; answering with what it holds`);
      }),
    );
  }

  /** Waits until every view has applied everything in the log up to now. */
  async waitForAll(): Promise<void> {
    await this.waitFor(
      this.projections.map((p) => p.name),
      await this.store.head(),
    );
  }

  private async pollCheckpoint(collection: string, position: LogPosition, timeout: number): Promise<boolean> {
    const deadline = Date.now() + timeout;
    for (;;) {
      const checkpoint = await this.views.writer(collection).checkpoint();
      if (checkpoint !== null && checkpoint >= position) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
