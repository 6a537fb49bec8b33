import { RequestWrites, ViewProgress } from '@deals/kernel';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticatedRequest } from './authenticated-request';

type WritingRequest = FastifyRequest & { writes?: RequestWrites };

/** The tracker of what this request's commands append (one per request, made when first asked for). */
export function requestWrites(request: FastifyRequest): RequestWrites {
  const writing = request as WritingRequest;
  return (writing.writes ??= new RequestWrites());
}

/**
 * Read your writes for every answer: a request that appended events is answered only once every
 * view that shows them has caught up (bounded), whether the answer is its success or a refusal
 * its commands wrote for (a declined card's hold given back). A success has usually waited for its
 * views already; a request that wrote nothing goes out at once. A callback hook: no promise for
 * requests that wrote nothing.
 */
export function answerAfterTheViewsShowTheWrites(fastify: FastifyInstance, progress: () => ViewProgress): void {
  fastify.addHook(
    'onSend',
    (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
      const writes = (request as WritingRequest).writes;
      if (!writes || writes.positions.size === 0) return done(null, payload);
      const reader = readerOf(request);
      // An answer built from its own decision: the caller's next reads wait for the rest instead.
      if (writes.deferred && reader !== null) {
        progress().deferWrites(reader, writes);
        return done(null, payload);
      }
      // The wait logs a view that is late; the answer goes out either way.
      progress()
        .waitForWrites(writes)
        .then(
          () => done(null, payload),
          () => done(null, payload),
        );
    },
  );
}

/** Whose reads wait for a deferred write: the partner that made it (its users' tokens included). */
function readerOf(request: FastifyRequest): string | null {
  return (request as AuthenticatedRequest).partner?.id ?? null;
}

/**
 * Marks a read route with the views it reads: after an answer built from its decision, it waits
 * for those only (a route not marked waits for every view the partner's writes left behind).
 */
export const ReadsViews = (...views: string[]) => RouteConfig({ readsViews: views });

const readsOf = (request: FastifyRequest) => (request.routeOptions.config as { readsViews?: readonly string[] } | undefined)?.readsViews;

/**
 * The other half of an answer built from its decision (`RequestWrites.deferred`): a read (GET,
 * HEAD) by the same partner, once authenticated, waits (bounded) until the views its earlier
 * answers left behind show them: those the route reads ({@link ReadsViews}), else all. Nothing to
 * wait for is the usual case: no promise then.
 */
export function readAfterDeferredWrites(fastify: FastifyInstance, progress: () => ViewProgress): void {
  fastify.addHook('preHandler', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const reader = request.method === 'GET' || request.method === 'HEAD' ? readerOf(request) : null;
    const waiting = reader === null ? null : progress().readerWaits(reader, readsOf(request));
    if (waiting === null) return done();
    waiting.then(
      () => done(),
      () => done(),
    );
  });
}
