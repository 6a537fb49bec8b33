import {
  commonErrorResponses,
  describeIdempotency,
  describeRateLimits,
  IDEMPOTENCY_KEY_PARAMETER,
  PUBLIC_PATHS,
  publicErrorResponses,
  RATE_LIMIT_HEADERS,
  SECURITY,
  sharedErrorResponses,
  sharedSchemas,
  WRITE_METHODS,
} from '@deals/wire';
import type { INestApplication } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { OPERATION_IDS } from './operation-ids';
import { guardDocsPages, serveSwaggerUi } from './swagger-ui';

/** The release the description describes: package.json's version (docs/versioning.md, CHANGELOG.md). */
export const API_VERSION = '0.5.0';

/** The tags operations are grouped by (one per context), with what each holds. */
const TAGS: Record<string, string> = {
  catalog: 'deals (v1 and v3 shapes), regions, deals around a point',
  accounts: 'users, their stored cards and temporary access tokens',
  purchasing: 'purchases (stored card, full, reserve/claim/release), coupons, reseller sales',
  engagement: 'card links, saved deals, regional email subscriptions',
  messaging: 'targeted-email batches',
  sandbox: "test mode only (test credentials): what a sandbox may simulate, such as a card network's transactions",
  settlement: "the partner's daily statements: sales, refunds, card-link incentives and fees by UTC day, with line items, CSV and a digest",
  'bulk jobs': 'many users, saved deals, subscriptions or coupon redemptions in one job, run in the background, with each item’s result',
  events: "the partner's event feed: every event of its resources, in log order, kept for ever",
  webhooks: 'webhook endpoints: events pushed as they happen, signed as Standard Webhooks says, retried, replayable',
  audit: "a purchase's or a partner's history, for auditor credentials",
  operations: 'health and readiness, without credentials',
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/**
 * The OpenAPI description of every served operation, generated from the controllers and their
 * request and response schemas; each operation gets the credentials its path takes (HTTP basic on
 * /api/v3, `api_key` elsewhere, none on public paths, a user's token where its decorator allows it)
 * and the error answers every authenticated operation may give, and its `operationId` (OPERATION_IDS).
 */
export function describeApi(app: INestApplication, serverUrl: string): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Deals, purchases and users service')
    .setDescription(
      'The partner API: deals, regions, users, stored cards, purchases, coupons, reseller sales, audit. ' +
        'Money is in integer cents. Every refusal is answered in the error body (Error).',
    )
    .setVersion(API_VERSION)
    .addServer(serverUrl)
    .addApiKey(
      { type: 'apiKey', in: 'query', name: 'api_key', description: 'the partner API key (v1 and unprefixed paths)' },
      SECURITY.apiKey,
    )
    .addBasicAuth({ type: 'http', scheme: 'basic', description: 'v3 calls: partner username and password' }, SECURITY.basic)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: "a user's temporary access token (deprecated)" }, SECURITY.bearer);
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const config = builder.build();
  const document = SwaggerModule.createDocument(app, config);
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...sharedSchemas() },
    parameters: { ...document.components?.parameters, IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER },
    responses: { ...document.components?.responses, ...sharedErrorResponses() },
    headers: { ...document.components?.headers, ...RATE_LIMIT_HEADERS },
  };
  for (const [path, item] of Object.entries(document.paths)) {
    const concrete = path.replace(/\{[^}]+\}/g, 'x');
    const isPublic = PUBLIC_PATHS.some((pattern) => pattern.test(concrete));
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      operation.operationId = OPERATION_IDS[`${method.toUpperCase()} ${path}`] ?? operation.operationId;
      if (isPublic) {
        operation.security = [];
        operation.responses = { ...publicErrorResponses(), ...operation.responses };
      } else {
        const own = operation.security ?? [];
        const partner: Record<string, string[]> = { [path.startsWith('/api/v3') ? SECURITY.basic : SECURITY.apiKey]: [] };
        // The auditor's pages take the username and password a browser asks for, beside the key.
        const pageBasic = path.startsWith('/audit/pages/') ? [{ [SECURITY.basic]: [] }] : [];
        operation.security = [partner, ...pageBasic, ...own.filter((s) => !(SECURITY.apiKey in s) && !(SECURITY.basic in s))];
        operation.responses = { ...commonErrorResponses(), ...operation.responses };
        if (WRITE_METHODS.has(method.toUpperCase())) describeIdempotency(operation as never, '#/components/parameters/IdempotencyKey');
        describeRateLimits(operation as never);
      }
    }
  }
  return document;
}

/**
 * Serves the description as JSON at `/api-docs.json` and Swagger UI at `/api-docs`, without
 * credentials, with their own headers (CSP without inline script or style, never framed).
 */
export function publishApiDescription(app: NestFastifyApplication, serverUrl: string): void {
  const fastify = app.getHttpAdapter().getInstance();
  guardDocsPages(fastify, serverUrl);
  // Swagger UI is served by serveSwaggerUi: the page @nestjs/swagger builds has inline styles.
  SwaggerModule.setup('api-docs', app, () => describeApi(app, serverUrl), {
    jsonDocumentUrl: 'api-docs.json',
    raw: ['json'],
    ui: false,
  });
  serveSwaggerUi(fastify);
}
