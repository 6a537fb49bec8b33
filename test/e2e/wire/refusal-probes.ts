/**
 * Requests an operation of the API description refuses, made from the description alone: unknown
 * ids in its path, and each of its fields given a value of the wrong shape, every value a marker
 * of its own (lower case, as a search of a log or a file for it is). Markers come in shapes that
 * pass a format check where one is made (an email, a 16-digit number that looks like a card's), so
 * that a refusal further on (an unknown user, card or coupon) is reached too.
 */
export interface Probe {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
  form?: boolean;
  auth: 'api_key' | 'v3' | 'none';
  markers: string[];
}

type Schema = Record<string, any>;
type Shape = 'plain' | 'email' | 'digits';

/** Numbers markers across every probe made. */
let made = 0;

class Markers {
  used: string[] = [];
  make(shape: Shape): string {
    const n = String(++made).padStart(5, '0');
    const marker =
      shape === 'email' ? `mrk${n}x4929123456781234@example.com` : shape === 'digits' ? luhn(`492977${n}0000`) : `mrk4929123456781234x${n}`;
    this.used.push(marker);
    return marker;
  }
  /** A value of the same field that its rules refuse: another shape, or longer than it takes. */
  malformed(shape: Shape, schema: Schema): string {
    if (shape !== 'plain') return this.make('plain');
    return `${this.make('plain')}${'x'.repeat((schema.maxLength ?? 1000) + 1)}`;
  }
}

/** `digits` and the check digit that makes them pass a card-number check. */
function luhn(digits: string): string {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return `${digits}${(10 - (sum % 10)) % 10}`;
}

function shapeOf(name: string, schema: Schema): Shape {
  if (/email/.test(name)) return 'email';
  if (/^(number|card_number|zip|postal_code)$/.test(name) || /\\d/.test(String(schema.pattern ?? ''))) return 'digits';
  return 'plain';
}

/** The first branch of a union that is not null. */
function concrete(schema: Schema): Schema {
  const branches: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
  if (branches) return concrete(branches.find((b) => b.type !== 'null' && !b.nullable) ?? branches[0]);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map(concrete));
  return schema;
}

/** A value the schema's format takes, with a marker in each text (a known word where it names its words). */
function plausible(name: string, raw: Schema, markers: Markers): unknown {
  const schema = concrete(raw);
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, field] of Object.entries((schema.properties ?? {}) as Record<string, Schema>))
        out[key] = plausible(key, field, markers);
      return out;
    }
    case 'array':
      return [plausible(name, schema.items ?? { type: 'string' }, markers)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    default:
      return schema.format === 'date-time' ? '2026-07-01T00:00:00Z' : markers.make(shapeOf(name, schema));
  }
}

/** Every text field of a body schema: its path and schema. */
function textFields(raw: Schema, path: string[] = []): { path: string[]; schema: Schema }[] {
  const schema = concrete(raw);
  if (schema.type === 'object')
    return Object.entries((schema.properties ?? {}) as Record<string, Schema>).flatMap(([key, field]) => textFields(field, [...path, key]));
  if (schema.type === 'array') return textFields(schema.items ?? {}, [...path, '0']);
  return schema.type === 'string' && !schema.enum && path.length ? [{ path, schema }] : [];
}

function setAt(body: any, path: string[], value: unknown): void {
  let at = body;
  for (const key of path.slice(0, -1)) at = at?.[key];
  if (at && typeof at === 'object') at[path[path.length - 1]] = value;
}

export function refusalProbes(description: Schema): Probe[] {
  const probes: Probe[] = [];
  for (const [template, item] of Object.entries(description.paths as Record<string, Schema>)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters' || typeof op !== 'object') continue;
      const params: Schema[] = (op.parameters ?? []).map((p: Schema) =>
        p.$ref ? description.components.parameters[p.$ref.split('/').pop()] : p,
      );
      const scheme = Object.keys(op.security?.[0] ?? {})[0];
      const auth: Probe['auth'] = scheme === 'api_key' ? 'api_key' : scheme === 'v3' ? 'v3' : 'none';
      const media = Object.keys(op.requestBody?.content ?? {});
      const form = !media.includes('application/json') && media.length > 0;
      const bodySchema: Schema | undefined = media.length ? op.requestBody.content[media[0]].schema : undefined;
      /** One request: path and query parameters from `value`, the body from `makeBody`. */
      const probe = (value: (p: Schema, markers: Markers) => string | undefined, makeBody?: (markers: Markers) => unknown) => {
        const markers = new Markers();
        let path = template;
        const query: Record<string, string> = {};
        const headers: Record<string, string> = {};
        for (const p of params) {
          const v = value(p, markers);
          if (v === undefined) continue;
          if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(v));
          else if (p.in === 'query') query[p.name] = v;
          else if (p.in === 'header') headers[p.name] = v;
        }
        const body = makeBody?.(markers);
        probes.push({ method: method.toUpperCase(), path, query, headers, body, form, auth, markers: markers.used });
      };
      // Path parameters and headers (an Idempotency-Key) given markers.
      const pathMarker = (p: Schema, markers: Markers) => (p.in !== 'query' ? markers.make(shapeOf(p.name, p.schema ?? {})) : undefined);
      const fullBody = bodySchema && ((markers: Markers) => plausible('body', bodySchema, markers));
      // Unknown ids (and unknown ids in the body).
      probe(pathMarker, fullBody);
      // Each query parameter given a marker.
      if (params.some((p) => p.in === 'query' && concrete(p.schema ?? {}).type !== 'boolean'))
        probe((p, markers) => markers.make(shapeOf(p.name, p.schema ?? {})), fullBody);
      // Each text field of the body, one at a time, given a value of a shape its rules refuse.
      for (const field of bodySchema ? textFields(bodySchema) : []) {
        probe(pathMarker, (markers) => {
          const body = plausible('body', bodySchema!, markers);
          setAt(body, field.path, markers.malformed(shapeOf(field.path[field.path.length - 1], field.schema), field.schema));
          return body;
        });
      }
    }
  }
  return probes;
}
