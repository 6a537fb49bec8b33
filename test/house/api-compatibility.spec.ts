import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { tempDir } from '../support/temp-dir';

const root = join(__dirname, '..', '..');
const SCRIPT = join(root, 'scripts', 'check-api-compatibility.sh');
const CURRENT = join(root, 'openapi.json');

/** Go, which builds oasdiff the first time: on PATH, or where its tarball installs it. */
const go = [...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'go')), '/usr/local/go/bin/go'].find((file) =>
  existsSync(file),
);

type Description = {
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, any> };
};

/** The script's status and output: openapi.json against the newest release (its defaults), or `current` against that release. */
function check(current = CURRENT): Promise<{ code: number; output: string }> {
  const args = current === CURRENT ? [] : [newestRelease(), current];
  return new Promise((resolve) =>
    execFile(SCRIPT, args, { cwd: root, timeout: 15 * 60_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    ),
  );
}

/** The newest release's description in api/releases, as the script picks it. */
function newestRelease(): string {
  const versions = readdirSync(join(root, 'api', 'releases'))
    .map((file) => /^openapi-(\d+)\.(\d+)\.(\d+)\.json$/.exec(file))
    .filter((match): match is RegExpExecArray => match !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]) || Number(a[2]) - Number(b[2]) || Number(a[3]) - Number(b[3]));
  return join(root, 'api', 'releases', versions[versions.length - 1][0]);
}

const body = (operation: any) => operation.requestBody.content['application/json'].schema;

/**
 * Each breaking kind, made in a copy of openapi.json on what release 0.5.0 has already (a change to
 * what is not released yet breaks no client), and the oasdiff check that must fail it.
 */
const BREAKS: Array<[string, string, (d: Description) => void]> = [
  ['an operation removed', 'api-path-removed-without-deprecation', (d) => delete d.paths['/purchases/reserve']],
  ['an operationId renamed', 'api-operation-id-removed', (d) => (d.paths['/purchases'].post.operationId = 'buyPurchase')],
  [
    'a query parameter removed',
    'request-parameter-removed',
    (d) => {
      const list = d.paths['/users/{user_id}/purchases'].get;
      list.parameters = list.parameters.filter((p: { name?: string }) => p.name !== 'per_page');
    },
  ],
  [
    'a required answer property renamed',
    'response-required-property-removed',
    (d) => rename(d.components.schemas.Purchase, 'coupons', 'coupon_list'),
  ],
  [
    'an optional answer property renamed',
    'response-optional-property-removed',
    (d) => rename(d.components.schemas.DealV1, 'fine_print_legalese', 'fine_print'),
  ],
  [
    'a request property renamed',
    'request-property-removed',
    (d) => rename(body(d.paths['/purchases'].post), 'session_id', 'affiliate_session'),
  ],
  [
    'a request enum value removed',
    'request-property-enum-value-removed',
    (d) => {
      const mode = body(d.paths['/v1/targeted_email/batches'].post).properties.mode;
      mode.enum = mode.enum.filter((value: string) => value !== 'augment');
    },
  ],
  [
    'an answer enum value removed',
    'response-property-enum-value-removed',
    (d) => {
      const state = d.components.schemas.Purchase.properties.payment_state;
      state.enum = state.enum.slice(1);
    },
  ],
  [
    'a required request field added',
    'request-property-became-required',
    (d) => body(d.paths['/purchases'].post).required.push('session_id'),
  ],
  ['a 200 answer widened to a oneOf union', 'response-body-wrapped-in-one-of', (d) => widen(d, 'oneOf')],
  ['a 200 answer widened to an anyOf union', 'response-body-any-of-added', (d) => widen(d, 'anyOf')],
  ['a second success answer beside the 200', 'response-success-status-added', (d) => secondSuccess(d)],
];

function rename(schema: { properties: Record<string, unknown>; required?: string[] }, from: string, to: string): void {
  if (!(from in schema.properties)) throw new Error(`no property ${from} to rename`);
  schema.properties[to] = schema.properties[from];
  delete schema.properties[from];
  if (schema.required) schema.required = schema.required.map((name) => (name === from ? to : name));
}

/** POST /purchases answering a purchase or a dry run, as a union. */
function widen(d: Description, union: 'oneOf' | 'anyOf'): void {
  const content = d.paths['/purchases'].post.responses['200'].content['application/json'];
  content.schema = { [union]: [content.schema, { $ref: '#/components/schemas/DryRunAnswer' }] };
}

/**
 * POST /purchases answering a dry run under a success status of its own (201): a union all the
 * same for a client, whose generated call reads either body as its success.
 */
function secondSuccess(d: Description): void {
  const responses = d.paths['/purchases'].post.responses;
  responses['201'] = {
    description: 'a dry run',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/DryRunAnswer' } } },
  };
}

const suite = go ? describe : describe.skip;
const title = go
  ? 'openapi.json against the last release (scripts/check-api-compatibility.sh, oasdiff)'
  : 'the API compatibility check: skipped, Go is not installed (oasdiff is built with it)';

suite(title, () => {
  const dir = tempDir('api-compatibility');
  afterAll(() => dir.remove());

  // The first run builds oasdiff (about a minute, with Go's module download), later ones take it from the cache.
  it(
    'passes on openapi.json as it is',
    async () => {
      const { code, output } = await check();
      expect({ code, output: output.trim().split('\n').slice(0, 20) }).toEqual({ code: 0, output: expect.any(Array) });
    },
    15 * 60_000,
  );

  it.each(BREAKS)('fails on %s (%s)', async (_, rule, inject) => {
    const description = JSON.parse(readFileSync(CURRENT, 'utf8')) as Description;
    inject(description);
    const file = join(dir.path, `${rule}.json`);
    writeFileSync(file, JSON.stringify(description));
    const { code, output } = await check(file);
    expect({ code, rule: output.includes(`[${rule}]`) ? rule : output }).toEqual({ code: 1, rule });
  });
});
