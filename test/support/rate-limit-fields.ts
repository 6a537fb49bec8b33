import { BareItem, Item, parseList } from './structured-fields';

/** One budget as RateLimit-Policy and RateLimit tell it. */
export interface RateLimitPolicy {
  /** The quota (q): requests in a window. */
  quota: number;
  /** The window in seconds (w), when given. */
  window?: number;
  /** Requests left (r). */
  remaining: number;
  /** Seconds until more are given (t), when given. */
  reset?: number;
}

type Headers = Record<string, string | string[] | undefined>;

/** A field's value, its lines joined as RFC 9651 §4.2 says; undefined when the answer lacks it. */
const fieldValue = (headers: Headers, name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

function integer(item: Item, field: string, key: string, required: boolean): number | undefined {
  const param: BareItem | undefined = item.params.get(key);
  if (param === undefined) {
    if (required) throw new Error(`${field}: "${String(item.value.value)}" has no ${key}`);
    return undefined;
  }
  if (param.type !== 'integer' || param.value < 0)
    throw new Error(`${field}: "${String(item.value.value)}";${key} is not a non-negative integer: ${JSON.stringify(param)}`);
  return param.value;
}

/** Each item's policy name, which the draft has be a String; a name given twice fails. */
function byName(items: Item[], field: string): Map<string, Item> {
  const named = new Map<string, Item>();
  for (const item of items) {
    if (item.value.type !== 'string') throw new Error(`${field}: a policy named by a ${item.value.type}, not a string`);
    if (named.has(item.value.value)) throw new Error(`${field}: the policy "${item.value.value}" given twice`);
    named.set(item.value.value, item);
  }
  return named;
}

/**
 * The budgets an answer tells in `RateLimit-Policy` and `RateLimit`, by policy name, checked against
 * draft-ietf-httpapi-ratelimit-headers: both non-empty Lists of Items named by Strings, q required
 * and a non-negative Integer, w when given a positive Integer, r required and a non-negative Integer,
 * t when given a non-negative Integer, and every policy of one field told in the other. Null when the
 * answer carries neither field; throws when it carries one alone or either breaks a rule.
 */
export function rateLimitFields(headers: Headers): Map<string, RateLimitPolicy> | null {
  const policyText = fieldValue(headers, 'ratelimit-policy');
  const limitText = fieldValue(headers, 'ratelimit');
  if (policyText === undefined && limitText === undefined) return null;
  if (policyText === undefined || limitText === undefined)
    throw new Error(`an answer with ${policyText === undefined ? 'RateLimit' : 'RateLimit-Policy'} alone`);
  const policies = byName(parseList(policyText), 'RateLimit-Policy');
  const limits = byName(parseList(limitText), 'RateLimit');
  if (policies.size === 0 || limits.size === 0) throw new Error('an empty RateLimit-Policy or RateLimit');
  const told = new Map<string, RateLimitPolicy>();
  for (const [name, policy] of policies) {
    const limit = limits.get(name);
    if (!limit) throw new Error(`RateLimit-Policy names "${name}", which RateLimit does not`);
    const window = integer(policy, 'RateLimit-Policy', 'w', false);
    if (window === 0) throw new Error(`RateLimit-Policy: "${name}";w=0 (a window is at least a second)`);
    told.set(name, {
      quota: integer(policy, 'RateLimit-Policy', 'q', true)!,
      window,
      remaining: integer(limit, 'RateLimit', 'r', true)!,
      reset: integer(limit, 'RateLimit', 't', false),
    });
  }
  for (const name of limits.keys()) if (!policies.has(name)) throw new Error(`RateLimit names "${name}", which RateLimit-Policy does not`);
  return told;
}
