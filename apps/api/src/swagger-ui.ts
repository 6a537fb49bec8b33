import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { dirname } from 'node:path';

export const DOCS_PATH = '/api-docs';
export const DOCS_DOCUMENT_PATH = '/api-docs.json';

/** Swagger UI's files, from the swagger-ui-dist that @nestjs/swagger depends on. */
const SWAGGER_UI_DIR = dirname(
  require.resolve('swagger-ui-dist/absolute-path.js', { paths: [dirname(require.resolve('@nestjs/swagger'))] }),
);
/** The files of it the page loads: nothing else of the folder (its own index.html and initializer load a demo) is served. */
const SWAGGER_UI_FILES = new Set(['/swagger-ui.css', '/index.css', '/swagger-ui-bundle.js', '/favicon-32x32.png', '/favicon-16x16.png']);

/**
 * Scripts and styles from the service's own files only (no inline script or style, no eval), the
 * document and "Try it out" to the service (and its public address), images from it and the data:
 * and blob: URLs Swagger UI makes (its icons, an image an operation answers), never framed.
 */
export function docsPolicy(publicBaseUrl: string): string {
  const publicOrigin = new URL(publicBaseUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `connect-src 'self' ${publicOrigin}`,
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * Swagger UI's page: no inline script or style (the page @nestjs/swagger builds has inline styles),
 * its files relative to the page's address (`base`), so that the pages work behind a proxy that
 * serves the service under a path.
 */
const page = (base: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Deals service API</title>
<link rel="stylesheet" href="${base}swagger-ui.css">
<link rel="stylesheet" href="${base}index.css">
<link rel="icon" type="image/png" href="${base}favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${base}favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${base}swagger-ui-bundle.js"></script>
<script src="${base}swagger-ui-init.js"></script>
</body>
</html>
`;

/**
 * Starts Swagger UI on the document beside this script (`/api-docs.json`), without the top bar that
 * loads any other address, and without the validator badge (it would send the document's address
 * to validator.swagger.io).
 */
const INIT_SCRIPT = `'use strict';
(function () {
  var documentUrl = new URL('../api-docs.json', document.currentScript.src).href;
  window.addEventListener('load', function () {
    window.ui = SwaggerUIBundle({
      url: documentUrl,
      dom_id: '#swagger-ui',
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis],
      layout: 'BaseLayout',
      validatorUrl: null,
    });
  });
})();
`;

/**
 * The headers of the API description's pages, their files and the document (`/api-docs`,
 * `/api-docs/*`, `/api-docs.json`): added as route hooks as those routes are registered, so the
 * API's routes pay nothing. Call before they are registered.
 */
export function guardDocsPages(fastify: FastifyInstance, publicBaseUrl: string): void {
  const headers: Record<string, string> = {
    'content-security-policy': docsPolicy(publicBaseUrl),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
  const onSend = (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
    for (const [name, value] of Object.entries(headers)) void reply.header(name, value);
    done(null, payload);
  };
  fastify.addHook('onRoute', (route: RouteOptions) => {
    if (route.url !== DOCS_DOCUMENT_PATH && route.url !== DOCS_PATH && !route.url.startsWith(`${DOCS_PATH}/`)) return;
    route.onSend = [...[route.onSend ?? []].flat(), onSend];
  });
}

/** Serves Swagger UI at `/api-docs` (and `/api-docs/`, `/api-docs/index.html`): the page, its start script, Swagger UI's files. */
export function serveSwaggerUi(fastify: FastifyInstance): void {
  const html = (base: string) => {
    const text = page(base);
    return (_request: FastifyRequest, reply: FastifyReply) => reply.type('text/html; charset=utf-8').send(text);
  };
  fastify.get(DOCS_PATH, html(`${DOCS_PATH.slice(1)}/`));
  fastify.get(`${DOCS_PATH}/`, html('./'));
  fastify.get(`${DOCS_PATH}/index.html`, html('./'));
  fastify.get(`${DOCS_PATH}/swagger-ui-init.js`, (_request, reply) => reply.type('text/javascript; charset=utf-8').send(INIT_SCRIPT));
  void fastify.register(fastifyStatic, {
    root: SWAGGER_UI_DIR,
    prefix: `${DOCS_PATH}/`,
    decorateReply: false,
    index: false,
    allowedPath: (path) => SWAGGER_UI_FILES.has(path),
  });
}
