import { ValidationFailed, ValidationIssue } from '@deals/kernel';

/** Attributes of the v3 deal a caller may ask for in `fields`. */
export const V3_FIELDS = [
  'id',
  'campaign',
  'category',
  'category_id',
  'cost',
  'description1',
  'description2',
  'end_at',
  'expiration_days',
  'expires_at',
  'fine_print',
  'fine_print_legalese',
  'fixed_fee',
  'fulfillment_method',
  'highlights',
  'images',
  'incentive_amount',
  'incentive_percentage',
  'instructions',
  'locations',
  'max_gift_per_user',
  'max_linkage',
  'max_per_user',
  'maximum_allowance',
  'merchant_id',
  'merchant_name',
  'min_spend',
  'num_left',
  'num_qualifying',
  'number_sold',
  'percent_fee',
  'purchase_url',
  'region_id',
  'region_name',
  'robotitle',
  'shipping_address_required',
  'show_url',
  'sold_out',
  'soldout',
  'start_at',
  'starting_price',
  'state',
  'subcategory',
  'subcategory_id',
  'supplier_id',
  'tags',
  'title',
  'type',
  'value',
] as const;

/** Attributes with sub-fields, and the sub-fields they take in brackets. */
export const V3_SUBFIELDS: Record<string, readonly string[]> = {
  images: ['large', 'medium', 'small', 'tiny'],
  locations: ['address', 'hours', 'phone'],
};

/** Sortable attributes and the view field each sorts on. */
export const V3_SORTS: Record<string, string> = {
  id: '_id',
  title: 'title',
  start_at: 'startAt',
  end_at: 'endAt',
  price: 'price',
  value: 'value',
  num_left: 'numLeft',
  number_sold: 'numberSold',
  merchant_name: 'merchantName',
  category: 'categoryKey',
  subcategory: 'subcategoryKey',
  region_id: 'regionId',
};

export type FieldSelection = Map<string, string[] | null>;
export type SortKey = { attribute: string; field: string; direction: 1 | -1 };
export type PriceOperator = '<' | '<=' | '=' | '>=' | '>';

export type V3Condition =
  | { name: 'category' | 'subcategory' | 'region'; values: string[] }
  | { name: 'region_city'; places: Array<{ city: string; state: string }> }
  | { name: 'price'; operator: PriceOperator; cents: number }
  | { name: 'price_in'; cents: number[] }
  | { name: 'lat_long'; latitude: number; longitude: number; miles: number }
  | { name: 'sold_out'; value: boolean };

export interface V3Query {
  fields: FieldSelection | null;
  sort: SortKey[];
  conditions: V3Condition[];
}

export const V3_DEFAULT_SORT: SortKey[] = [{ attribute: 'end_at', field: 'endAt', direction: -1 }];

/** Splits on commas that are not inside brackets or parentheses. */
export function splitTopLevel(text: string): string[] | null {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      if (--depth < 0) return null;
    } else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (depth !== 0) return null;
  parts.push(text.slice(start).trim());
  return parts;
}

/** `%20` written literally by callers that encode twice. */
const decodeSpaces = (text: string) => text.replace(/%20/gi, ' ').trim();
const NUMBER = /^-?\d+(\.\d+)?$/;
/** Half the Earth's circumference: as far as any point is (and as /deals/locate takes). */
const MAX_RADIUS_MILES = 12_500;

class Issues {
  readonly list: ValidationIssue[] = [];
  add(field: string, message: string) {
    this.list.push({ type: 'invalid', resource: 'deal', field, message });
  }
}

function parseFields(text: string, issues: Issues): FieldSelection | null {
  const parts = splitTopLevel(text);
  if (!parts || parts.some((p) => p === '')) return (issues.add('fields', `is malformed: ${JSON.stringify(text)}`), null);
  const selection: FieldSelection = new Map();
  for (const part of parts) {
    const match = /^([a-z_0-9]+)(?:\[([^[\]]*)\])?$/.exec(part);
    if (!match) {
      issues.add('fields', `is malformed at ${JSON.stringify(part)}`);
      continue;
    }
    const [, name, inner] = match;
    if (!(V3_FIELDS as readonly string[]).includes(name)) {
      issues.add('fields', `names an unknown attribute ${JSON.stringify(name)}`);
      continue;
    }
    if (inner === undefined) {
      selection.set(name, null);
      continue;
    }
    const allowed = V3_SUBFIELDS[name];
    const subs = inner.split(',').map((s) => s.trim());
    if (!allowed) issues.add('fields', `attribute ${JSON.stringify(name)} has no sub-fields`);
    else
      for (const sub of subs)
        if (!allowed.includes(sub)) issues.add('fields', `names an unknown sub-field ${JSON.stringify(`${name}[${sub}]`)}`);
    selection.set(name, subs);
  }
  return selection;
}

function parseSort(text: string, issues: Issues): SortKey[] {
  const parts = splitTopLevel(text);
  if (!parts || parts.some((p) => p === '')) return (issues.add('sort', `is malformed: ${JSON.stringify(text)}`), []);
  const keys: SortKey[] = [];
  for (const part of parts) {
    const match = /^([a-z_]+)\((asc|desc)\)$/i.exec(part);
    if (!match) {
      issues.add('sort', `must be attribute(asc) or attribute(desc), got ${JSON.stringify(part)}`);
      continue;
    }
    const attribute = match[1];
    // Own names only: `constructor(asc)` must not find Object.prototype's.
    const field = Object.hasOwn(V3_SORTS, attribute) ? V3_SORTS[attribute] : undefined;
    if (!field) issues.add('sort', `cannot sort on ${JSON.stringify(attribute)}; sortable: ${Object.keys(V3_SORTS).join(', ')}`);
    else keys.push({ attribute, field, direction: match[2].toLowerCase() === 'asc' ? 1 : -1 });
  }
  return keys;
}

function parsePlace(text: string): { city: string; state: string } | null {
  const comma = text.lastIndexOf(',');
  if (comma <= 0) return null;
  const city = decodeSpaces(text.slice(0, comma));
  const state = decodeSpaces(text.slice(comma + 1));
  return city && /^[A-Za-z]{2}$/.test(state) ? { city, state: state.toUpperCase() } : null;
}

function parseCondition(part: string, issues: Issues): V3Condition | null {
  const comparison = /^price(<=|>=|<|>|=)(.*)$/.exec(part);
  if (comparison) {
    const [, operator, value] = comparison;
    if (!/^\d+$/.test(value.trim()))
      return (issues.add('filter', `price${operator} needs whole cents, got ${JSON.stringify(value)}`), null);
    return { name: 'price', operator: operator as PriceOperator, cents: Number(value) };
  }
  const bracket = /^([a-z_]+)\[(.*)\]$/.exec(part);
  if (!bracket) return (issues.add('filter', `is malformed at ${JSON.stringify(part)}`), null);
  const [, name, inner] = bracket;
  const values = (inner.split(',') ?? []).map(decodeSpaces);
  switch (name) {
    case 'category':
    case 'subcategory':
    case 'region':
      if (values.some((v) => v === '')) return (issues.add('filter', `${name}[...] needs one or more names`), null);
      return { name, values };
    case 'price': {
      if (values.some((v) => !/^\d+$/.test(v)))
        return (issues.add('filter', `price[...] needs whole cents, got ${JSON.stringify(inner)}`), null);
      return { name: 'price_in', cents: values.map(Number) };
    }
    case 'region_city': {
      const nested = inner.trim().startsWith('[');
      const items = nested ? splitTopLevel(inner) : [inner];
      const places = (items ?? []).map((item) => parsePlace(nested ? item.replace(/^\[|\]$/g, '') : item));
      if (!items || places.length === 0 || places.some((p) => p === null)) {
        return (issues.add('filter', `region_city needs [city,ST] or [[city,ST],[city,ST]], got ${JSON.stringify(inner)}`), null);
      }
      return { name, places: places as Array<{ city: string; state: string }> };
    }
    case 'lat_long': {
      const [latitude, longitude, miles] = values.map(Number);
      const ok =
        values.length === 3 &&
        values.every((v) => NUMBER.test(v)) &&
        Math.abs(latitude) <= 90 &&
        Math.abs(longitude) <= 180 &&
        miles > 0 &&
        miles <= MAX_RADIUS_MILES;
      if (!ok)
        return (issues.add('filter', `lat_long needs [latitude,longitude,radius_in_miles] in range, got ${JSON.stringify(inner)}`), null);
      return { name, latitude, longitude, miles };
    }
    case 'sold_out':
      if (values.length !== 1 || !['true', 'false'].includes(values[0]))
        return (issues.add('filter', 'sold_out needs [true] or [false]'), null);
      return { name, value: values[0] === 'true' };
    default:
      return (issues.add('filter', `names an unknown condition ${JSON.stringify(name)}`), null);
  }
}

/** Parses the `fields`, `sort` and `filter` keywords of GET /api/v3/deals. */
export function parseV3Query(params: Record<string, unknown>): V3Query {
  const issues = new Issues();
  const text = (key: string) => {
    const value = params[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return (issues.add(key, 'must be given once, as text'), undefined);
    return value;
  };
  const fieldsText = text('fields');
  const sortText = text('sort');
  const filterText = text('filter');
  const fields = fieldsText === undefined ? null : parseFields(fieldsText, issues);
  const sort = sortText === undefined ? V3_DEFAULT_SORT : parseSort(sortText, issues);
  const conditions: V3Condition[] = [];
  if (filterText !== undefined && filterText.trim() !== '') {
    const parts = splitTopLevel(filterText);
    if (!parts || parts.some((p) => p === '')) issues.add('filter', `is malformed: ${JSON.stringify(filterText)}`);
    else
      for (const part of parts) {
        const condition = parseCondition(part, issues);
        if (condition) conditions.push(condition);
      }
  }
  if (issues.list.length) throw new ValidationFailed(issues.list);
  return { fields, sort, conditions };
}
