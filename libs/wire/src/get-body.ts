import type { FastifyInstance } from 'fastify';

/**
 * Some calls carry the parameters of a GET as a JSON body (interface part 4). Fastify never parses
 * a body on GET unless GET is re-registered as a method with a body; and then a GET that merely
 * sends `Content-Type: application/json` with no body would be refused, so that header is dropped
 * when there is nothing to parse (libraries.md 6.3).
 */
export function allowJsonBodyOnGet(fastify: FastifyInstance): void {
  fastify.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
  fastify.addHook('onRequest', async (request) => {
    if (request.method !== 'GET') return;
    const length = request.headers['content-length'];
    const chunked = /chunked/i.test(request.headers['transfer-encoding'] ?? '');
    if (!chunked && (length === undefined || length === '0')) delete request.headers['content-type'];
  });
}
