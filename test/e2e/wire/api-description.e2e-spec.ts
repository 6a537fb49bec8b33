import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPI } from 'openapi-types';
import { TestApi } from '../../support/api-harness';
import { described } from '../../support/response-check';

/** Every route Fastify serves, as `METHOD /path/{param}` (HEAD twins of GET left out). */
function servedRoutes(api: TestApi): string[] {
  return api.servedRoutes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
}

describe('the API description', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await TestApi.start();
  });
  afterAll(() => api.close());

  it('is served without credentials, with Swagger UI beside it', async () => {
    const json = await api.call('GET', '/api-docs.json');
    expect(json.status).toBe(200);
    expect(json.body.openapi).toMatch(/^3\./);
    const ui = await api.raw('GET', '/api-docs');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger-ui');
  });

  it('describes every served operation, and serves every described one', async () => {
    const described = Object.entries(api.responses.document.paths).flatMap(([path, item]) =>
      Object.keys(item as object)
        .filter((key) => ['get', 'put', 'post', 'delete', 'patch'].includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    // The operator's paths (metrics, jobs) are not the partners' API: they are documented in docs/operations.md;
    // nor are the partner site's pages (docs/partner-site.md).
    const served = servedRoutes(api).filter((route) => !route.includes('/api-docs') && !/ \/(metrics|admin|partner)\b/.test(route));
    expect([...new Set(served)].sort()).toEqual([...new Set(described)].sort());
  });

  it('says what every operation answers, with an example, under the tag of its context', () => {
    const operations = Object.entries(api.responses.document.paths).flatMap(([path, item]) =>
      (['get', 'put', 'post', 'delete', 'patch'] as const)
        .filter((m) => item[m])
        .map((m) => ({ name: `${m} ${path}`, operation: item[m]! })),
    );
    const tags = new Set<string>();
    for (const { name, operation } of operations) {
      if (name.includes('/api-docs')) continue;
      expect({ name, described: described(operation as never) }).toEqual({ name, described: true });
      expect({ name, summary: typeof operation.summary }).toEqual({ name, summary: 'string' });
      for (const tag of operation.tags ?? []) tags.add(tag);
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1] as {
        content: Record<string, { schema: { example?: unknown } }>;
      };
      const json = success.content['application/json'];
      if (json) expect({ name, example: json.schema.example !== undefined }).toEqual({ name, example: true });
    }
    expect([...tags].sort()).toEqual([
      'accounts',
      'audit',
      'catalog',
      'engagement',
      'events',
      'messaging',
      'operations',
      'purchasing',
      'webhooks',
    ]);
  });

  it('is a valid OpenAPI document', async () => {
    const document = JSON.parse(JSON.stringify(api.responses.document)) as OpenAPI.Document;
    await expect(SwaggerParser.validate(document)).resolves.toBeDefined();
  });

  it('gives each operation its credentials: basic on /api/v3, none on public paths, api_key elsewhere', () => {
    const paths = api.responses.document.paths;
    expect(paths['/api/v3/deals'].get!.security).toEqual([{ v3: [] }]);
    expect(paths['/health'].get!.security).toEqual([]);
    expect(paths['/users/{user_id}'].get!.security).toEqual([{ api_key: [] }, { access_token: [] }]);
    expect(paths['/purchases/reserve'].post!.security).toEqual([{ api_key: [] }]);
  });

  it('describes the Idempotency-Key on every operation that writes (with its 409 and 422), and on no other', () => {
    const { paths, components } = api.responses.document;
    expect(components?.parameters?.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    let writes = 0;
    for (const [path, item] of Object.entries(paths)) {
      for (const method of ['get', 'post', 'put', 'delete'] as const) {
        const operation = item?.[method];
        if (!operation) continue;
        const keyed = (operation.parameters ?? []).some((p) => '$ref' in p && p.$ref === '#/components/parameters/IdempotencyKey');
        const writesHere = method !== 'get' && operation.security?.length !== 0;
        expect([`${method} ${path}`, keyed]).toEqual([`${method} ${path}`, writesHere]);
        if (!writesHere) continue;
        writes++;
        expect(operation.responses['409']).toBeDefined();
        expect(operation.responses['422']).toBeDefined();
      }
    }
    expect(writes).toBeGreaterThan(20);
  });
});
