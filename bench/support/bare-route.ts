/**
 * The reference the HTTP benches measure the API against: a bare Fastify 5 HTTPS server, with the
 * API's certificate, that answers each path it is given (path and query, exactly as the load
 * generator sends it) with the stored bytes the API returned for it. Its figures are what Node, TLS
 * and Fastify allow on this machine for those very responses.
 */
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface TlsMaterial {
  cert: string;
  key: string;
}

export interface BareRoute {
  origin: string;
  close(): Promise<void>;
}

/** Starts the bare route for `bodies` (request path with its query → body); other paths get 404. */
export async function startBareRoute(tls: TlsMaterial, bodies: ReadonlyMap<string, Buffer>): Promise<BareRoute> {
  const app = Fastify({ https: tls, logger: false });
  app.get('/*', (request, reply) => {
    const body = bodies.get(request.url);
    if (!body) return reply.code(404).send();
    return reply.header('content-type', JSON_CONTENT_TYPE).send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { origin: `https://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}

/**
 * The bare route for a POST call: answers every POST to `path` (query ignored) whose body parsed as
 * a JSON object (Fastify's own parser, as the API's) with the fixed `body`, e.g. the bytes the API
 * answered to one such call; anything else gets 400 or 404. Its figures are what Node, TLS and
 * Fastify allow for a small JSON POST and answer on this machine.
 */
export async function startBarePostRoute(tls: TlsMaterial, path: string, body: Buffer): Promise<BareRoute> {
  const app = Fastify({ https: tls, logger: false });
  app.post(path, (request, reply) => {
    if (!request.body || typeof request.body !== 'object' || Array.isArray(request.body)) return reply.code(400).send();
    return reply.header('content-type', JSON_CONTENT_TYPE).send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { origin: `https://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}
