import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPI } from 'openapi-types';
import { request } from 'undici';
import { TestApi } from '../../support/api-harness';
import { described } from '../../support/response-check';
import { InsecureHttps } from '../../support/insecure-https';

/** Every route Fastify serves, as `METHOD /path/{param}` (HEAD twins of GET left out). */
function servedRoutes(api: TestApi): string[] {
  return api.servedRoutes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
}

const insecure = new InsecureHttps();

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

  it('serves the description, Swagger UI and its files with a CSP without inline script or style, never framed', async () => {
    for (const path of [
      '/api-docs',
      '/api-docs/',
      '/api-docs/index.html',
      '/api-docs/swagger-ui-init.js',
      '/api-docs/swagger-ui-bundle.js',
      '/api-docs/swagger-ui.css',
      '/api-docs.json',
    ]) {
      const reply = await request(new URL(path, api.url), { dispatcher: insecure });
      await reply.body.text();
      expect({ path, status: reply.statusCode }).toEqual({ path, status: 200 });
      const policy = String(reply.headers['content-security-policy']);
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("script-src 'self'");
      expect(policy).toContain("style-src 'self'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).not.toContain('unsafe-');
      expect(reply.headers).toMatchObject({
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      });
    }
    // The page has no inline script or style: every script is a file of the service.
    const page = (await api.raw('GET', '/api-docs')).text;
    expect(page.match(/<script[^>]*>/g)?.every((tag) => / src="[^"]+"/.test(tag))).toBe(true);
    expect(page).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    // Only the files the page loads: not swagger-ui-dist's demo page and initializer.
    for (const path of ['/api-docs/swagger-initializer.js', '/api-docs/oauth2-redirect.html', '/api-docs/package.json'])
      expect({ path, status: (await api.raw('GET', path)).status }).toEqual({ path, status: 404 });
    // The API's own answers are unchanged.
    const health = await request(new URL('/health', api.url), { dispatcher: insecure });
    await health.body.text();
    expect(health.headers['content-security-policy']).toBeUndefined();
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
      'bulk jobs',
      'catalog',
      'engagement',
      'events',
      'messaging',
      'operations',
      'purchasing',
      'sandbox',
      'settlement',
      'webhooks',
    ]);
  });

  it('is a valid OpenAPI document', async () => {
    const document = JSON.parse(JSON.stringify(api.responses.document)) as OpenAPI.Document;
    await expect(SwaggerParser.validate(document)).resolves.toBeDefined();
  });

  it('gives no schema a type beside its alternatives: a value valid for one alternative is valid for the whole', () => {
    const both: string[] = [];
    const walk = (value: unknown, path: string): void => {
      if (Array.isArray(value)) return value.forEach((item, i) => walk(item, `${path}/${i}`));
      if (typeof value !== 'object' || value === null) return;
      if ('type' in value && ('anyOf' in value || 'oneOf' in value)) both.push(path);
      for (const [key, item] of Object.entries(value)) walk(item, `${path}/${key}`);
    };
    walk(api.responses.document, '#');
    expect(both).toEqual([]);
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

  it('describes RateLimit-Policy and RateLimit on every answer of an authenticated operation but those given before counting, and on no public one', () => {
    const { paths, components } = api.responses.document;
    expect(Object.keys(components?.headers ?? {}).sort()).toEqual(['RateLimit', 'RateLimit-Policy']);
    const uncounted = new Set(['401', '408', '414', '417', '431']);
    const carried: string[] = [];
    const expected: string[] = [];
    for (const [path, item] of Object.entries(paths)) {
      for (const method of ['get', 'post', 'put', 'delete', 'patch'] as const) {
        const operation = item?.[method];
        if (!operation) continue;
        for (const [status, answer] of Object.entries(operation.responses)) {
          const name = `${method} ${path} ${status}`;
          const ref = (answer as { $ref?: string }).$ref;
          const resolved = ref ? components?.responses?.[ref.replace('#/components/responses/', '')] : answer;
          const headers = Object.keys((resolved as { headers?: object }).headers ?? {});
          if (headers.includes('RateLimit-Policy') && headers.includes('RateLimit')) carried.push(name);
          if (operation.security?.length !== 0 && !uncounted.has(status)) expected.push(name);
        }
      }
    }
    expect(carried).toEqual(expected);
    expect(carried.length).toBeGreaterThan(200);
  });
});
