import { EventStore, Scheduler, ViewStore } from '@deals/kernel';
import { ProjectionHost } from '@deals/runtime';
import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { openApiSchema, CalledBy } from '@deals/wire';
import { z } from 'zod';

const part = z.object({ status: z.enum(['up', 'down']), backend: z.string(), message: z.string().optional() });
const parts = z.record(z.string(), part);

/** Terminus's report: each port's part, up or down, with its backend. */
const HealthReport = z.object({ status: z.enum(['ok', 'error']), info: parts.optional(), error: parts.optional(), details: parts }).meta({
  example: {
    status: 'ok',
    info: { eventStore: { status: 'up', backend: 'sqlite' } },
    error: {},
    details: { eventStore: { status: 'up', backend: 'sqlite' } },
  },
});

const Liveness = z.object({ status: z.literal('ok') }).meta({ example: { status: 'ok' } });
const Readiness = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    ports: z.enum(['up', 'down']),
    /** The ports that do not answer: which, on what backend, and why. */
    down: z.array(z.object({ port: z.string(), backend: z.string(), message: z.string() })),
    lagging_views: z.array(z.string()),
  })
  .meta({ example: { status: 'ready', ports: 'up', down: [], lagging_views: [] } });
/** How long readiness waits for the views to reach the log's head. */
const READY_WAIT_MS = 2000;

/** Each port's backend and whether it answers. Open to all (wire PUBLIC_PATHS): it reveals nothing about partners. */
@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly scheduler: Scheduler,
    private readonly progress: ProjectionHost,
  ) {}

  @Get()
  @CalledBy('anyone')
  @ApiOperation({
    summary: "Each port's backend and state",
    description: 'No credentials needed. 503 names the part that is down and why.',
  })
  @ApiResponse({ status: 200, description: 'every part is up', schema: openApiSchema(HealthReport, 'output') })
  @ApiResponse({ status: 503, description: 'a part is down', schema: openApiSchema(HealthReport, 'output') })
  // After Terminus's own description of the report, so that this stricter one (with each part's backend) is kept.
  @HealthCheck()
  check(@Res({ passthrough: true }) reply: FastifyReply) {
    return this.ports(reply);
  }

  @Get('live')
  @CalledBy('anyone')
  @ApiOperation({ summary: 'The process answers', description: 'Liveness: 200 whenever the process serves HTTP at all; no port is asked.' })
  @ApiResponse({ status: 200, description: 'alive', schema: openApiSchema(Liveness, 'output') })
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @CalledBy('anyone')
  @ApiOperation({
    summary: 'Ready to take traffic',
    description: `Readiness: every port answers and every view has applied the log up to its head within ${READY_WAIT_MS} ms; else 503 naming the ports that do not answer (\`down\`: which, its backend, why) and the views behind.`,
  })
  @ApiResponse({ status: 200, description: 'ready', schema: openApiSchema(Readiness, 'output') })
  @ApiResponse({ status: 503, description: 'not ready', schema: openApiSchema(Readiness, 'output') })
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    // With the log away, how far the views are cannot be known: the ports down say why.
    const [report, lagging] = await Promise.all([this.ports(reply), this.progress.lagging(READY_WAIT_MS).catch(() => [])]);
    const details = (report as { details?: Record<string, { status: string; backend: string; message?: string }> }).details ?? {};
    const down = Object.entries(details)
      .filter(([, part]) => part.status !== 'up')
      .map(([port, part]) => ({ port, backend: part.backend, message: part.message ?? '' }));
    const portsUp = (report as { status?: string }).status === 'ok';
    const ready = portsUp && lagging.length === 0;
    void reply.status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', ports: portsUp ? 'up' : 'down', down, lagging_views: lagging };
  }

  private async ports(reply: FastifyReply) {
    const probe = (key: string, backend: string, ping: () => Promise<void>) => async () => {
      const check = this.indicator.check(key);
      try {
        await ping();
        return check.up({ backend });
      } catch (error) {
        return check.down({ backend, message: error instanceof Error ? error.message : String(error) });
      }
    };
    try {
      return await this.health.check([
        probe('eventStore', this.store.backend, () => this.store.ping()),
        probe('viewStore', this.views.backend, () => this.views.ping()),
        probe('scheduler', this.scheduler.backend, () => this.scheduler.ping()),
      ]);
    } catch (error) {
      // Terminus throws its whole report when a part is down: it is the answer, with its 503
      // (the error filter would have put a bare internal error in its place).
      if (!(error instanceof ServiceUnavailableException)) throw error;
      void reply.status(503);
      return error.getResponse();
    }
  }
}
