import { TestClockAgenda, type BullmqScheduler } from '@deals/adapters';
import { accountOf, Scheduler } from '@deals/kernel';
import { listenForMetrics, listJobs, ServiceConfig, ServiceMetrics } from '@deals/runtime';
import type { AuthenticatedRequest, UsageMeter } from '@deals/wire';
import type { FastifyInstance } from 'fastify';
import type { Server } from 'node:http';

/**
 * Observes every answer in one hook: its method, route template (never the path, which holds ids),
 * status and time for the metrics (when on), and an authenticated partner's answer for its usage figures.
 */
export function recordAnswers(fastify: FastifyInstance, metrics: ServiceMetrics | null, usage: UsageMeter): void {
  // A callback hook, not an async one: no promise on every answer.
  fastify.addHook('onResponse', (request: AuthenticatedRequest, reply, done) => {
    metrics?.httpRequests.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unrouted', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    const partner = request.partner;
    // A test clock's calls are its sandbox's.
    if (partner !== undefined) usage.count(accountOf(partner.id), partner.credentialId, reply.statusCode);
    done();
  });
}

/**
 * Serves the metrics page: on `METRICS_PORT`, plain HTTP without credentials, when it is set (the
 * server is returned, to be closed); otherwise at `/metrics` on the API's port, where the
 * operator's credentials guard it.
 */
export async function serveMetrics(fastify: FastifyInstance, metrics: ServiceMetrics, config: ServiceConfig): Promise<Server | null> {
  if (config.metricsPort === null) {
    fastify.get('/metrics', async (_request, reply) => {
      const page = await metrics.page();
      return reply.type(page.contentType).send(page.text);
    });
    return null;
  }
  return listenForMetrics(metrics, config.metricsPort, config.host);
}

/** The scheduler's jobs as JSON at `/admin/jobs` (what `jobs:list` shows of an embedded API's timers). */
export function serveJobList(fastify: FastifyInstance, scheduler: Scheduler): void {
  fastify.get('/admin/jobs', async (request, reply) => {
    const asked = Number((request.query as { limit?: string }).limit ?? 100);
    const limit = Number.isSafeInteger(asked) && asked >= 1 ? Math.min(asked, 10_000) : 100;
    return reply.send(await listJobs(scheduler, limit));
  });
}

/** Bull Board at `/admin/queues` when the jobs are on BullMQ (the distributed mode); the operator's credentials guard it. */
export async function mountQueueBoard(fastify: FastifyInstance, scheduler: Scheduler): Promise<void> {
  if (scheduler.backend !== 'bullmq') return;
  // Loaded only here: the embedded mode never needs them.
  const [{ createBullBoard }, { BullMQAdapter }, { FastifyAdapter: BullBoardAdapter }] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/fastify'),
  ]);
  const board = new BullBoardAdapter();
  const bullmq = (scheduler instanceof TestClockAgenda ? scheduler.real : scheduler) as BullmqScheduler;
  createBullBoard({ queues: [new BullMQAdapter(bullmq.boardQueue)], serverAdapter: board });
  board.setBasePath('/admin/queues');
  void fastify.register(board.registerPlugin(), { prefix: '/admin/queues' });
}
