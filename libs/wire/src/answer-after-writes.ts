import { RequestWrites, ViewProgress } from '@deals/kernel';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

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
