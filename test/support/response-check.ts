import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIObject } from '@nestjs/swagger';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  statics: number;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

/** Whether an operation's description says what it answers on success (a 2xx with a body schema). */
export const described = (route: Pick<Route, 'responses'>) =>
  Object.entries(route.responses).some(([status, response]) => status.startsWith('2') && response.content !== undefined);

const refsInto = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value).replace(/"#\/components\//g, '"api-description#/components/'));

/**
 * Checks every answer the end-to-end suites receive against the API description: the operation
 * its method and path name must declare the answer's status, and the body must validate against
 * that status's schema. The description can so never drift from what is served.
 */
export class ResponseCheck {
  private readonly routes: Route[];
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly compiled = new Map<unknown, ValidateFunction>();

  constructor(readonly document: OpenAPIObject) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'api-description', components: refsInto(document.components ?? {}) });
    this.routes = [];
    for (const [template, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const source = template
          .split(/\{[^}]+\}/)
          .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
          .join('[^/]+');
        this.routes.push({
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(`^${source}$`),
          statics: template.split('/').filter((part) => part && !part.includes('{')).length,
          responses: Object.fromEntries(
            Object.entries(operation.responses).map(([status, response]) => [status, this.resolved(response)]),
          ) as Route['responses'],
        });
      }
    }
    // Fastify prefers a static segment to a parameter (`/deals/locate` over `/deals/{deal_id}`).
    this.routes.sort((a, b) => b.statics - a.statics);
  }

  /** A response, or the shared one (`components.responses`) it refers to. */
  private resolved(response: unknown): Route['responses'][string] {
    const ref = (response as { $ref?: string }).$ref;
    if (!ref) return response as Route['responses'][string];
    const shared = this.document.components?.responses?.[ref.replace('#/components/responses/', '')];
    if (!shared) throw new Error(`the description refers to ${ref}, which it does not hold`);
    return shared as Route['responses'][string];
  }

  /** The operation serving `method path`, if the description has one. */
  route(method: string, path: string): Route | undefined {
    const raw = path.split('?')[0];
    let bare = raw;
    try {
      bare = decodeURI(raw);
    } catch {
      // A malformed escape is refused before routing: no operation answers it.
    }
    return this.routes.find((r) => r.method === method.toUpperCase() && r.pattern.test(bare));
  }

  /**
   * Throws, naming the operation and what differs, when an answer is not what the description says:
   * a status it does not list, a media type other than those it lists for that status (when the
   * answer's `contentType` is given), a JSON body its schema refuses.
   */
  check(method: string, path: string, status: number, body: unknown, contentType?: string): void {
    const route = this.route(method, path);
    if (!route) return; // Unknown paths answer 404 before any operation; the routes test covers the rest.
    const response = route.responses[String(status)];
    if (!response) throw new Error(`${method} ${route.template} answered ${status}, which its description does not list`);
    const types = Object.keys(response.content ?? {});
    const type = contentType?.split(';')[0].trim();
    if (type && types.length && !types.includes(type))
      throw new Error(`${method} ${route.template} ${status} answered ${type}, where its description lists ${types.join(', ')}`);
    const schema = response.content?.['application/json']?.schema;
    if (!schema || body === undefined) return;
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(refsInto(schema) as object);
      this.compiled.set(schema, validate);
    }
    if (!validate(body)) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).slice(0, 5);
      throw new Error(`${method} ${route.template} ${status}: the body does not match its description: ${problems.join('; ')}`);
    }
  }
}
