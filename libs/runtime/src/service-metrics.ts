import { Clock, deadLetterCollection, EventStore, IdempotencyStore, Scheduler, ViewStore } from '@deals/kernel';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { PROJECTIONS, ProjectionHost } from './projection-host';
import { ServiceConfig } from './service-config';
import { StoreMetrics } from './store-metrics';
import type { Projection } from '@deals/kernel';
import { createServer, Server } from 'node:http';

/** Events read past a view's checkpoint to tell its lag: the gauge says "at least this many" beyond it. */
export const LAG_SCAN_EVENTS = 1000;
/** A scrape's reads of the log and the views serve the scrapes within this much of it. */
const LAG_READ_MS = 1000;

/**
 * The process's metrics in Prometheus' format (`GET /metrics`): its own registry, so that several
 * applications in one process (the tests) do not share counters. Counters count what this process
 * did since it started (Prometheus sums the processes); gauges of the log, the views and the jobs
 * are read at each scrape.
 */
@Injectable()
export class ServiceMetrics implements OnModuleInit {
  readonly registry = new Registry();
  readonly httpRequests: Histogram<'method' | 'route' | 'status'>;
  /** Answers of requests with an `Idempotency-Key` not kept for their repeats (too large, or their partner's share full). */
  readonly answersNotKept: Counter<'reason'>;
  private lagRead: { at: number; lags: Promise<Array<{ view: string; events: number; seconds: number }>> } | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly scheduler: Scheduler,
    @Inject(PROJECTIONS) private readonly projections: Projection[],
    private readonly clock: Clock,
    private readonly config: ServiceConfig,
    idempotency: IdempotencyStore,
    host: ProjectionHost,
    storeMetrics: StoreMetrics,
  ) {
    const registers = [this.registry];
    this.httpRequests = new Histogram({
      name: 'deals_http_request_duration_seconds',
      help: 'HTTP requests answered, by method, route template and status, with the time to answer',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    // The event store's counters, fed by the store as it writes (see StoreMetrics), listed among the process's.
    for (const metric of storeMetrics.metrics) this.registry.registerMetric(metric);
    const lagEvents = new Gauge({
      name: 'deals_projection_lag_events',
      help: `events in the log past the view's checkpoint (counted up to ${LAG_SCAN_EVENTS})`,
      labelNames: ['view'],
      registers,
      collect: async () => {
        for (const lag of await this.lags()) lagEvents.set({ view: lag.view }, lag.events);
      },
    });
    const lagSeconds = new Gauge({
      name: 'deals_projection_lag_seconds',
      help: 'age of the oldest event in the log the view has not applied (0: caught up)',
      labelNames: ['view'],
      registers,
      collect: async () => {
        for (const lag of await this.lags()) lagSeconds.set({ view: lag.view }, lag.seconds);
      },
    });
    const deadLettered = new Counter({
      name: 'deals_projection_dead_letters_total',
      help: 'events a view could not apply and set aside as dead letters by this process, by view (projections:dead-letters lists them)',
      labelNames: ['projection'],
      registers,
    });
    host.onDeadLetter((letter) => deadLettered.inc({ projection: letter.projection }));
    const openLetters = new Gauge({
      name: 'deals_projection_dead_letters',
      help: 'dead letters a view holds (events it set aside; a rebuild of the view applies again those it can), by view',
      labelNames: ['projection'],
      registers,
      collect: async () => {
        for (const { name } of this.projections)
          openLetters.set({ projection: name }, await this.views.count(deadLetterCollection(name), {}));
      },
    });
    this.answersNotKept = new Counter({
      name: 'deals_idempotent_answers_not_kept_total',
      help: 'answers of requests with an Idempotency-Key not kept for repeats, by reason: size (too large), partner_full (its share of the store)',
      labelNames: ['reason'],
      registers,
    });
    const keptBytes = new Gauge({
      name: 'deals_idempotency_kept_bytes',
      help: "what a partner's Idempotency-Keys and kept answers take up in the store, in bytes (as this process last read it)",
      labelNames: ['partner'],
      registers,
      collect: () => {
        keptBytes.reset();
        for (const [partner, bytes] of idempotency.keptBytes()) keptBytes.set({ partner }, bytes);
      },
    });
    const jobs = new Gauge({
      name: 'deals_scheduled_jobs',
      help: 'scheduled jobs by state: waiting (armed for later), due, running, failed (kept after their last attempt)',
      labelNames: ['state'],
      registers,
      collect: async () => {
        const counts = await this.scheduler.counts();
        for (const [state, count] of Object.entries(counts)) jobs.set({ state }, count);
      },
    });
  }

  onModuleInit(): void {
    if (this.config.metrics) collectDefaultMetrics({ register: this.registry });
  }

  /** The page Prometheus scrapes. */
  async page(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  /** Each view's lag, read once for the gauges of one scrape. */
  private lags(): Promise<Array<{ view: string; events: number; seconds: number }>> {
    const now = this.clock.now().getTime();
    if (this.lagRead && now - this.lagRead.at < LAG_READ_MS) return this.lagRead.lags;
    const lags = Promise.all(
      this.projections.map(async ({ name }) => {
        const checkpoint = await this.views.writer(name).checkpoint();
        const behind = await this.store.readAll({ after: checkpoint, maxCount: LAG_SCAN_EVENTS });
        const oldest = behind[0] ? Date.parse(behind[0].metadata.occurredAt) : now;
        return { view: name, events: behind.length, seconds: Math.max(0, (now - oldest) / 1000) };
      }),
    );
    this.lagRead = { at: now, lags };
    return lags;
  }
}

/** Serves `GET /metrics` alone on `port`: plain HTTP without credentials, for a private network (`METRICS_PORT`). */
export async function listenForMetrics(metrics: ServiceMetrics, port: number, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics is served here\n');
      return;
    }
    metrics.page().then(
      (page) => response.writeHead(200, { 'content-type': page.contentType }).end(page.text),
      (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  return server;
}
