import { RouteConfig } from '@nestjs/platform-fastify';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';

/** The largest form body read, in bytes: a form's few fields, never a file. */
const FORM_BODY_LIMIT = 64 * 1024;

/** Marks a route that takes a form body besides JSON (a mail client's one-click POST); its description says which. */
export const TakesFormBodies = () => RouteConfig({ formBodies: true });

/** 415, as Fastify answers a type no parser takes; without the Content-Type sent (a refusal names no value given). */
const refused = () => new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE();

/**
 * Form bodies, where a route takes them: the routes marked with {@link TakesFormBodies} and every
 * path under the `prefixes` given (a site's pages, its unknown ones too). Elsewhere they are
 * refused with 415 as any body that is not JSON. URL-encoded fields are read into an object; a
 * multipart body (the form a mail client may send for a one-click unsubscribe) is read and left
 * out, as no route reads its fields.
 */
export function parseFormBodies(fastify: FastifyInstance, prefixes: string[]): void {
  const takes = (request: FastifyRequest) => {
    if ((request.routeOptions.config as { formBodies?: boolean } | undefined)?.formBodies === true) return true;
    const route = request.routeOptions.url ?? request.url;
    return prefixes.some((prefix) => route.startsWith(`${prefix}/`));
  };
  fastify.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (request, body, done) =>
      takes(request) ? done(null, Object.fromEntries(new URLSearchParams(String(body)))) : done(refused(), undefined),
  );
  fastify.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT }, (request, _body, done) =>
    takes(request) ? done(null, undefined) : done(refused(), undefined),
  );
}
