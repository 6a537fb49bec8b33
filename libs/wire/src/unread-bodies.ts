import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';

/** How much of a body the service still reads and drops before an answer that closes its connection, and for how long. */
export interface DrainBounds {
  bytes: number;
  ms: number;
}

/** Past the largest body any route takes (a bulk job's 16 MiB), and well within the request's own time limit. */
export const DRAIN_BOUNDS: DrainBounds = { bytes: 16 * 1024 * 1024, ms: 5_000 };

/**
 * An answer that closes its connection (a body refused as too large or unreadable, Fastify's
 * `Connection: close`) is sent only once the rest of the request's body has been read and dropped,
 * within `bounds`. Closing a socket with input unread resets the connection, and a client still
 * sending its body then met ECONNRESET or EPIPE instead of the answer (a 2 MiB form's 413). A body
 * past the bounds is answered anyway; what follows it may still reset.
 */
export function readBodiesBeforeClosing(fastify: FastifyInstance, bounds: DrainBounds = DRAIN_BOUNDS): void {
  // A callback hook, not an async one: every answer passes it, and nearly all go on at once.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const connection = reply.getHeader('connection');
    if (connection === undefined || String(connection).toLowerCase() !== 'close') return done(null, payload);
    void dropUnreadBody(request.raw, bounds).then(() => done(null, payload));
  });
}

/** Reads the rest of a request's body and drops it; settles at its end, on its close or error, or past the bounds. */
export function dropUnreadBody(raw: IncomingMessage, bounds: DrainBounds): Promise<void> {
  if (raw.complete || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', done).off('close', done).off('error', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > bounds.bytes) done();
    };
    const timer = setTimeout(done, bounds.ms);
    raw.on('data', onData).once('end', done).once('close', done).once('error', done);
    // Past the bounds the stream keeps flowing without a reader: what arrives until the close is dropped too.
    raw.resume();
  });
}
