import { ValidationFailed, yieldToLoop } from '@deals/kernel';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEPTH_SLICE, MAX_JSON_DEPTH, nestsDeeperThan, nestsDeeperThanInSlices } from './json-depth';

/** A body nested deeper than the service reads: 400, before anything walks it. */
class TooDeep extends Error {
  readonly statusCode = 400;
  constructor() {
    super(`the JSON body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`);
  }
}

/**
 * Some calls carry the parameters of a GET as a JSON body, and Fastify parses a
 * body on GET only once GET is re-registered as a method with a body. The JSON
 * parser is replaced by one that wraps Fastify's own (which guards against prototype poisoning):
 * an empty body is no body, so a client that sends `Content-Type: application/json` on every GET
 * is not refused; a malformed body is a validation failure in the error body, which Nest's own
 * mapping of parser errors would lose; a body that nests deeper than {@link MAX_JSON_DEPTH} is
 * refused (400) before it is parsed. A body larger than {@link DEPTH_SLICE} (a bulk job's items) is
 * read for its depth in slices, and parsed in a turn of the event loop of its own, its value handed
 * on in the next: other requests are answered between the steps.
 */
export function parseJsonBodies(fastify: FastifyInstance): void {
  fastify.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
  const parse = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  const parsed = (request: FastifyRequest, text: string, done: (error: Error | null, value: unknown) => void) =>
    parse(request, text, (error, value) => {
      if (!error) return done(null, value);
      done(new ValidationFailed([{ type: 'invalid', resource: 'request', field: 'body', message: 'is not valid JSON' }]), undefined);
    });
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    if (text.length <= DEPTH_SLICE) {
      if (nestsDeeperThan(text)) return done(new TooDeep(), undefined);
      return parsed(request, text, done);
    }
    void (async () => {
      if (await nestsDeeperThanInSlices(text)) return done(new TooDeep(), undefined);
      await yieldToLoop();
      parsed(request, text, (error, value) => setImmediate(() => done(error, value)));
    })();
  });
}
