import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from './error-body';

/**
 * What a route answers instead of the error body, for a status it describes in a body of its own.
 * Its result must not be an error body itself (its `errors`, if any, not a list), so that a kept
 * answer, shaped already, is sent again as it is.
 */
export type ErrorBodyShape = (body: ErrorBody) => Record<string, unknown>;

type ShapesByStatus = Readonly<Record<number, ErrorBodyShape>>;

/**
 * Marks a route whose refusals of a status are described in a body of its own (the reseller coupon
 * error): every error body it answers with that status, wherever it is made (the handler, the error
 * filter, the text and idempotency hooks, a kept answer sent again), goes out in that shape.
 */
export const ShapesErrorBodies = (shapes: ShapesByStatus) => RouteConfig({ errorBodyShapes: shapes });

/**
 * Adds, to each route marked with {@link ShapesErrorBodies}, an `onSend` hook that runs before the
 * route's other ones (the kept answer of an `Idempotency-Key` is kept shaped): an answer of a marked
 * status whose body is the error body is sent in the route's shape. Any other answer, one already
 * shaped included, goes out as it is.
 */
export function shapeErrorBodies(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    const shapes = (route.config as { errorBodyShapes?: ShapesByStatus } | undefined)?.errorBodyShapes;
    if (!shapes) return;
    const shape = (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
      const shaper = shapes[reply.statusCode];
      done(null, shaper ? shaped(payload, shaper) : payload);
    };
    route.onSend = [shape as never, ...[route.onSend ?? []].flat()];
  });
}

/** The error body: `status` error, `error_type` and `error_msg`, and `errors` a list if given. */
const isErrorBody = (body: unknown): body is ErrorBody => {
  if (typeof body !== 'object' || body === null) return false;
  const { status, error_type, error_msg, errors } = body as Partial<ErrorBody>;
  return (
    status === 'error' && typeof error_type === 'string' && typeof error_msg === 'string' && (errors === undefined || Array.isArray(errors))
  );
};

/** The payload (JSON text, as serialized or as kept) in the shape, when it is the error body; else as it is. */
function shaped(payload: unknown, shaper: ErrorBodyShape): unknown {
  const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
  if (text === null) return payload;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return payload;
  }
  if (!isErrorBody(body)) return payload;
  return JSON.stringify(shaper(body));
}
