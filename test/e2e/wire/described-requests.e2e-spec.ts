import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  example?: unknown;
  minimum?: number;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
  example?: unknown;
}

/**
 * Fields the service needs only in a case the operation's description names: left out of a call
 * that sends nothing else, they are refused although described as optional.
 */
const NEEDED_IN_SOME_CASES: Record<string, string[]> = {
  // "`user_id` and `deal_id`, or `deal_ids`": one of the two; user_id unless a user's token calls.
  'POST /card_links': ['deal_id', 'user_id'],
  // With partner credentials the user is named; a user's access token acts for its own.
  'POST /saved_deals': ['user_id'],
  'GET /credit_cards': ['user_id'],
  'POST /credit_cards': ['user_id'],
  // "A user section (user_id or a user object), a card section (credit_card_id or a credit_card object)".
  'POST /v1/purchases/full.json': ['user', 'credit_card'],
  'POST /v1/purchases/full/dry_run.json': ['user', 'credit_card'],
  // Daily and on-going deals also need the quantity and the buyer's name; shipped ones the address.
  'POST /api/v3/resellers/purchases': ['quantity', 'first_name', 'last_name'],
  'POST /api/v3/resellers/purchases.json': ['quantity', 'first_name', 'last_name'],
};

/** A value the schema takes: its example, else a plain one of its type. */
function valueOf(schema: Schema | undefined): unknown {
  if (!schema) return 'x';
  if (schema.example !== undefined) return schema.example;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return valueOf(schema.anyOf[0]);
  switch (schema.type) {
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [valueOf(schema.items)];
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((name) => [name, valueOf(schema.properties?.[name])]));
    default:
      return 'x';
  }
}

/**
 * The description's word on what a call requires, against the service: every operation called
 * with only what its description marks required (each value the description's example) is never
 * refused for leaving out a field the description calls optional.
 */
describe('the requests the API description describes', () => {
  let api: TestApi;
  let partner: Awaited<ReturnType<TestApi['createPartner']>>;

  beforeAll(async () => {
    api = await TestApi.start();
    partner = await api.createPartner('Described');
    await api.importRegions([chicago]);
    await api.importDeals([spaDay]);
  });
  afterAll(() => api.close());

  it('refuses no call for leaving out a field described as optional', async () => {
    const document = api.responses.document;
    const refused: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation || path.startsWith('/api-docs')) continue;
        const name = `${method.toUpperCase()} ${path}`;
        const parameters = (operation.parameters ?? []) as Parameter[];
        const concrete = path.replace(/\{([^}]+)\}/g, (_, param: string) =>
          encodeURIComponent(String(parameters.find((p) => p.name === param)?.schema?.example ?? 'x')),
        );
        const query = new URLSearchParams(
          parameters
            .filter((p) => p.in === 'query' && p.required)
            .map((p) => [p.name, String(p.example ?? valueOf(p.schema))] as [string, string]),
        ).toString();
        const body = (operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content?.['application/json']
          ?.schema;
        const reply = await api.call(method.toUpperCase(), `${concrete}${query ? `?${query}` : ''}`, {
          ...(path.startsWith('/api/v3')
            ? { basic: { username: partner.username, password: partner.password } }
            : { apiKey: partner.apiKey }),
          ...(body ? { body: valueOf(body) } : {}),
        });
        if (reply.status !== 422) continue;
        const described = new Set([
          ...parameters.filter((p) => p.required).map((p) => p.name),
          ...(body?.required ?? []),
          ...(NEEDED_IN_SOME_CASES[name] ?? []),
        ]);
        const missing = ((reply.body?.errors ?? []) as Array<{ type: string; field?: string }>)
          .filter((issue) => issue.type === 'missing_field' && issue.field !== undefined && !described.has(issue.field))
          .map((issue) => issue.field);
        if (missing.length) refused.push(`${name}: ${missing.join(', ')} (${reply.body.error_msg})`);
      }
    }
    expect(refused).toEqual([]);
  });
});
