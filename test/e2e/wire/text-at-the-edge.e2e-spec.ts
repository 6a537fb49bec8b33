import { OPERATOR } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { CommandBus } from '@nestjs/cqrs';
import { request } from 'undici';
import { TestApi } from '../../support/api-harness';
import { InsecureHttps } from '../../support/insecure-https';
import { inputValue, SiteClient } from '../../support/site-client';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const RULE = 'must be well-formed Unicode text without NUL';
const LONE_SURROGATE = 'Ana\ud800';
const NUL = 'Ana\u0000';
const PASSWORD = 'a long and private passphrase';

interface Operation {
  parameters?: Array<{ name: string; in: string; schema?: { type?: string } }>;
  requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, { type?: string }> } }> };
  'x-callers'?: string[];
}

type Keys = { apiKey: string; username: string; password: string };

/**
 * No route takes text a store cannot keep: every operation of the API description, and every route of
 * the partner site, called with a lone surrogate and with a NUL in one of its strings (a body field it
 * describes, a path part, a query parameter), is refused 422 naming that field, never the text.
 */
describe('text a store cannot keep, on every route', () => {
  const insecure = new InsecureHttps();
  let api: TestApi;
  let callers: Record<'partner' | 'sandbox' | 'auditor', Keys>;
  let partnerId: string;

  beforeAll(async () => {
    api = await TestApi.start();
    const partner = await api.createPartner('Texts');
    const auditor = await api.createPartner('Auditor', 'auditor');
    callers = { partner, sandbox: partner.sandbox!, auditor };
    partnerId = partner.partnerId;
  });
  afterAll(() => api.close());

  /** One call: JSON text as the body (`"\ud800"` escapes kept), credentials of a caller the operation takes. */
  async function send(method: string, path: string, operation: Operation, query: Record<string, string>, json?: string) {
    const who = operation['x-callers'] ?? [];
    const keys = callers[who.includes('partner') ? 'partner' : who.includes('sandbox') ? 'sandbox' : 'auditor'];
    const url = new URL(path, api.url);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    const headers: Record<string, string> = {};
    if (path.startsWith('/api/v3')) headers.authorization = `Basic ${Buffer.from(`${keys.username}:${keys.password}`).toString('base64')}`;
    else url.searchParams.set('api_key', keys.apiKey);
    if (json !== undefined) headers['content-type'] = 'application/json';
    const reply = await request(url, { method: method.toUpperCase() as never, headers, body: json, dispatcher: insecure });
    const text = await reply.body.text();
    return { status: reply.statusCode, text };
  }

  /** Whether an answer is the refusal naming `field` and the rule, without the text sent. */
  const refuses = (reply: { status: number; text: string }, field: string) => {
    if (reply.status !== 422 || reply.text.includes('Ana')) return false;
    const body = JSON.parse(reply.text) as {
      error_type: string;
      errors?: Array<{ field?: string; message: string; type: string }> | { coupons: string[] };
    };
    if (body.error_type !== 'validation_failed') return false;
    // The coupon cancel answers its 422s in the reseller coupon error body: the field and rule as a reason.
    if (body.errors && !Array.isArray(body.errors)) return body.errors.coupons.includes(`${field} ${RULE}`);
    return (body.errors ?? []).some((e) => e.field === field && e.message === RULE && e.type === 'invalid');
  };

  it('refuses a lone surrogate and a NUL in a body field, a path part or a query parameter of every operation described', async () => {
    const document = api.responses.document as { paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>> };
    const wrong: string[] = [];
    let called = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        called++;
        const name = `${method.toUpperCase()} ${path}`;
        const parameters = operation.parameters ?? [];
        const concrete = path.replace(/\{[^}]+\}/g, 'x0');
        // A string field the body describes, else any field: the check reads every field sent.
        const properties = operation.requestBody?.content?.['application/json']?.schema?.properties ?? {};
        const field = Object.entries(properties).find(([, schema]) => schema.type === 'string')?.[0] ?? 'note';
        for (const [kind, text] of [
          ['lone surrogate', LONE_SURROGATE],
          ['NUL', NUL],
        ]) {
          // JSON.stringify writes a lone surrogate as its escape, as a client's JSON carries it.
          const reply = await send(method, concrete, operation, {}, JSON.stringify({ [field]: text }));
          if (!refuses(reply, field)) wrong.push(`${name}, ${kind} in the body's ${field}: ${reply.status} ${reply.text.slice(0, 160)}`);
        }
        // A URL carries no lone surrogate (its escape is not UTF-8): a NUL in a path part, else a query parameter.
        const pathPart = parameters.find((p) => p.in === 'path');
        const queryName = parameters.find((p) => p.in === 'query' && p.schema?.type === 'string')?.name ?? 'q';
        const reply = pathPart
          ? await send(method, path.replace(`{${pathPart.name}}`, encodeURIComponent(NUL)).replace(/\{[^}]+\}/g, 'x0'), operation, {})
          : await send(method, concrete, operation, { [queryName]: NUL });
        const named = pathPart?.name ?? queryName;
        if (!refuses(reply, named)) wrong.push(`${name}, NUL in ${named}: ${reply.status} ${reply.text.slice(0, 160)}`);
      }
    }
    expect(called).toBeGreaterThanOrEqual(100);
    expect(wrong).toEqual([]);
  });

  it('names the field of a bad text deep in a body (a bulk item, partner data) and an object whose field name is bad', async () => {
    const reply = await send(
      'post',
      '/v1/bulk_jobs',
      { 'x-callers': ['partner'] },
      {},
      JSON.stringify({
        kind: 'users',
        items: [{ reference: 'r0' }, { reference: 'r1', user_id: 'x\ud800y', partner_data: { note: 'a\u0000', ['k\udc00']: 1 } }],
      }),
    );
    expect(reply.status).toBe(422);
    expect(JSON.parse(reply.text).errors).toEqual([
      { type: 'invalid', resource: 'request', field: 'items.1.user_id', message: RULE },
      { type: 'invalid', resource: 'request', field: 'items.1.partner_data.note', message: RULE },
      { type: 'invalid', resource: 'request', field: 'items.1.partner_data', message: `holds a field whose name ${RULE}` },
    ]);
  });

  it("refuses a NUL in a form field, a query parameter or a path part of every route of the partner site, on the site's page", async () => {
    const invited = await api.get(CommandBus).execute(new InviteMember(partnerId, 'texts@example.com', OPERATOR));
    await api.settle();
    const site = new SiteClient(api.url);
    const link = `/partner/sign-up?token=${invited.token}`;
    await site.submit(link, '/partner/sign-up', { token: invited.token, password: PASSWORD, password_confirmation: PASSWORD });
    expect((await site.signIn('texts@example.com', PASSWORD)).status).toBe(303);
    const csrf = inputValue((await site.get('/partner/keys')).text, '_csrf')!;
    const routes = api.servedRoutes.filter((r) => r.url.startsWith('/partner/') && (r.method === 'GET' || r.method === 'POST'));
    expect(routes.length).toBeGreaterThanOrEqual(20);
    const wrong: string[] = [];
    for (const route of routes) {
      const param = /:(\w+)/.exec(route.url)?.[1];
      const path = route.url.replace(/:\w+/g, param ? encodeURIComponent(NUL) : 'x0').replace('*', 'x0');
      const field = param ?? (route.method === 'POST' ? 'note' : 'q');
      const page =
        route.method === 'POST'
          ? await site.post(path, { _csrf: csrf, ...(param ? {} : { note: NUL }) })
          : await site.get(param ? path : `${path}?q=${encodeURIComponent(NUL)}`);
      const shown = `${field.replace(/_/g, ' ')} ${RULE}`;
      if (page.status !== 422 || !String(page.headers['content-type']).startsWith('text/html') || !page.text.includes(shown))
        wrong.push(`${route.method} ${route.url}: ${page.status} ${page.text.slice(0, 120)}`);
    }
    expect(wrong).toEqual([]);
  });
});
