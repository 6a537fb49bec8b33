import fc from 'fast-check';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';

/**
 * Requests made from the API description itself: for every operation, path ids, query parameters
 * and JSON bodies drawn from its schemas and from their violations (wrong types, missing and extra
 * fields, oversized and odd strings, deep nesting, odd path parts). Every answer must be below 500,
 * every 4xx an error body, and (through the harness) every answer one the description lists.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

interface Parameter {
  name: string;
  in: 'path' | 'query';
  required?: boolean;
  schema?: Schema;
}

const oddText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('', ' ', '0', '-1', 'null', 'true', '1e309', '..', '%', '\u0000', '<script>', "' OR 1=1 --", 'a'.repeat(5000)),
);

/** Nested arrays and objects `depth` levels deep, the way a parser meets them. */
const deep = fc.integer({ min: 1, max: 3000 }).map((depth) => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
});

const junk: fc.Arbitrary<unknown> = fc.oneof(fc.jsonValue({ maxDepth: 3 }), oddText, deep, fc.double(), fc.bigInt().map(String));

/** A value of `schema`'s shape, or now and then a violation of it. */
function valueOf(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return junk;
  const alternatives = schema.anyOf ?? schema.oneOf;
  const conforming: fc.Arbitrary<unknown> = alternatives
    ? fc.oneof(...alternatives.map((s) => valueOf(s, depth + 1)))
    : schema.enum
      ? fc.constantFrom(...schema.enum)
      : schema.type === 'integer'
        ? fc.integer({ min: schema.minimum ?? -10, max: Math.min(schema.maximum ?? 2000, 1e9) })
        : schema.type === 'number'
          ? fc.double({ noNaN: true, min: -200, max: 200 })
          : schema.type === 'boolean'
            ? fc.boolean()
            : schema.type === 'array'
              ? fc.array(valueOf(schema.items, depth + 1), { maxLength: 4 })
              : schema.type === 'object'
                ? objectOf(schema, depth + 1)
                : oddText;
  return fc.oneof({ weight: 4, arbitrary: conforming }, { weight: 1, arbitrary: junk });
}

/** An object with the schema's required fields, some of its optional ones, now and then one left out or an extra. */
function objectOf(schema: Schema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  const fields = Object.fromEntries(properties.map(([name, property]) => [name, valueOf(property, depth)]));
  return fc
    .tuple(
      fc.record(fields, { requiredKeys: schema.required ?? [] }),
      fc.subarray(properties.map(([name]) => name)),
      fc.dictionary(fc.string({ maxLength: 12 }), junk, { maxKeys: 2 }),
    )
    .map(([record, dropped, extra]) => {
      const value: Record<string, unknown> = { ...extra, ...record };
      for (const name of dropped.slice(0, 1)) delete value[name];
      return value;
    });
}

/**
 * A query parameter's text: objects as JSON (their own `toString` may be anything). Kept short: an
 * address past the 16 KB header limit is answered 431 while the client still writes, and the
 * wire tests cover that case.
 */
const queryText = (value: unknown) => (value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value));

const pathPart = (real: string[]) =>
  fc
    .oneof(
      fc.constantFrom(...real),
      oddText.filter((s) => s.length > 0 && s.length <= 1000),
    )
    .map((s) => encodeURIComponent(s));

describe('fuzzing every described operation', () => {
  let api: TestApi;
  let partner: Awaited<ReturnType<TestApi['createPartner']>>;

  beforeAll(async () => {
    api = await TestApi.start();
    partner = await api.createPartner('Fuzz');
    await api.importRegions([chicago]);
    await api.importDeals([spaDay]);
  });
  afterAll(() => api.close());

  const document = () => api.responses.document;

  it(`answers ${RUNS} generated requests per operation below 500, each 4xx in the error body`, async () => {
    const operations = Object.entries(document().paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]).map((method) => ({ path, method, operation: item[method]! })),
    );
    expect(operations.length).toBeGreaterThan(30);
    const real = ['chicago', spaDay.id as string, '60601', 'chicago,IL'];
    for (const { path, method, operation } of operations) {
      // The description itself, and the coupon's image and printable page, which are not JSON.
      if (path.startsWith('/api-docs') || /\/(qr\.png|print)$/.test(path)) continue;
      const parameters = (operation.parameters ?? []) as Parameter[];
      const body = (operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content?.['application/json']
        ?.schema;
      const request = fc.record({
        path: fc.tuple(...parameters.filter((p) => p.in === 'path').map(() => pathPart(real))),
        query: fc.record(
          Object.fromEntries(
            parameters
              .filter((p) => p.in === 'query')
              .map((p) => [
                p.name,
                valueOf(p.schema)
                  .map(queryText)
                  .filter((text) => text.length <= 2000),
              ]),
          ),
          { requiredKeys: [] },
        ),
        body: body ? fc.option(valueOf(body), { freq: 8 }) : fc.constant(undefined),
      });
      const v3 = path.startsWith('/api/v3');
      await fc.assert(
        fc.asyncProperty(request, async ({ path: ids, query, body: sent }) => {
          let index = 0;
          const concrete = path.replace(/\{[^}]+\}/g, () => ids[index++]);
          const search = new URLSearchParams(query as Record<string, string>).toString();
          const reply = await api.call(method.toUpperCase(), `${concrete}${search ? `?${search}` : ''}`, {
            ...(v3 ? { basic: { username: partner.username, password: partner.password } } : { apiKey: partner.apiKey }),
            ...(sent !== undefined && sent !== null ? { body: sent } : {}),
          });
          if (reply.status >= 500)
            throw new Error(`${method.toUpperCase()} ${concrete} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
          if (reply.status >= 400) {
            expect(reply.body).toMatchObject({ status: 'error' });
            const body = reply.body as Record<string, unknown>;
            expect(typeof body.error_msg === 'string' || typeof body.message === 'string').toBe(true);
          }
        }),
        { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 1e9), endOnFailure: true },
      );
    }
  }, 600_000);
});
