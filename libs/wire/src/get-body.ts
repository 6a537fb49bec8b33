import { ValidationFailed } from '@deals/kernel';
import type { FastifyInstance } from 'fastify';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';

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
 * refused (400) before it is parsed.
 */
export function parseJsonBodies(fastify: FastifyInstance): void {
  fastify.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
  const parse = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    if (nestsDeeperThan(text)) return done(new TooDeep(), undefined);
    parse(request, text, (error, value) => {
      if (!error) return done(null, value);
      done(new ValidationFailed([{ type: 'invalid', resource: 'request', field: 'body', message: 'is not valid JSON' }]), undefined);
    });
  });
}
