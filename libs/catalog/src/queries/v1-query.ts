import { isCalendarDay, ValidationFailed, ValidationIssue, ViewFilter } from '@deals/kernel';
import { flagValue, wholeNumber } from '@deals/wire';
import { WORKFLOW_STATES, WorkflowState } from '../domain/deal/deal-terms';
import { containsText, effectiveStateFilter, onSaleFilter, withinMiles } from './deal-filters';
import { mergeFilters } from './merge-filters';

/** Radius around latitude/longitude when the caller gives none, in miles. */
export const DEFAULT_RADIUS_MILES = 25;

/** The parameters of GET /v1/deals, checked and typed. */
export interface V1DealQuery {
  slug?: string;
  marketplaceSlug?: string;
  title?: string;
  state?: WorkflowState;
  showAll: boolean;
  category?: string;
  subcategory?: string;
  merchant?: string;
  priceMin?: number;
  priceMax?: number;
  region?: string;
  near?: { latitude: number; longitude: number; miles: number };
  user?: string;
  suppliers?: string[];
  vendors?: string[];
  numLeft?: number;
  excludeSoldout: boolean;
  runsMin?: number;
  runsMax?: number;
  excludeCardLinked: boolean;
}

/** The longest text a list filter takes (a title, a merchant, a supplier's name). */
const MAX_TEXT = 256;

/**
 * A decimal number given as a JSON number or as text in decimal notation (`40.7`, `-74`, `1e1`
 * is not: nor `0x28`, which `Number` would read as 40); null when it is not one, or not finite.
 */
export function decimalValue(value: unknown): number | null {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\s*[-+]?(\d+\.?\d*|\.\d+)\s*$/.test(value) ? Number(value) : NaN;
  return Number.isFinite(n) ? n : null;
}

class Reader {
  readonly issues: ValidationIssue[] = [];
  constructor(private readonly params: Record<string, unknown>) {}
  fail(field: string, message: string, type: ValidationIssue['type'] = 'invalid') {
    this.issues.push({ type, resource: 'deal', field, message });
  }
  has(field: string) {
    const v = this.params[field];
    return v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');
  }
  text(field: string): string | undefined {
    if (!this.has(field)) return undefined;
    const v = this.params[field];
    if (typeof v !== 'string' && typeof v !== 'number') return (this.fail(field, 'must be text'), undefined);
    const text = String(v).trim();
    // Partial-match fields become patterns; past this a pattern is not a search.
    if ([...text].length > MAX_TEXT) return (this.fail(field, `must be at most ${MAX_TEXT} characters`), undefined);
    return text;
  }
  whole(field: string): number | undefined {
    const n = wholeNumber(this.params[field]);
    if (n === null || (n !== undefined && n < 0)) return (this.fail(field, 'must be a whole number, not negative'), undefined);
    return n;
  }
  decimal(field: string): number | undefined {
    if (!this.has(field)) return undefined;
    const n = decimalValue(this.params[field]);
    if (n === null) return (this.fail(field, 'must be a number'), undefined);
    return n;
  }
  flag(field: string): boolean | undefined {
    const f = flagValue(this.params[field]);
    if (f === null) return (this.fail(field, 'must be true or false'), undefined);
    return f;
  }
  list(field: string): string[] | undefined {
    if (!this.has(field)) return undefined;
    const v = this.params[field];
    const flat = Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number');
    const items = flat ? (v as Array<string | number>).flatMap((x) => String(x).split(',')) : typeof v === 'string' ? v.split(',') : null;
    if (!items) return (this.fail(field, 'must be a list of text or comma-separated text'), undefined);
    const listed = items.map((s) => s.trim()).filter(Boolean);
    if (listed.some((item) => [...item].length > MAX_TEXT))
      return (this.fail(field, `must hold items of at most ${MAX_TEXT} characters`), undefined);
    return listed;
  }
  instant(field: string): number | undefined {
    const t = this.text(field);
    if (t === undefined) return undefined;
    const ms = /^\d{4}-\d\d-\d\d/.test(t) ? Date.parse(t) : NaN;
    // A day the calendar does not have (2024-02-30) is refused: JavaScript would read it as 1 March.
    if (Number.isNaN(ms) || !isCalendarDay(t.slice(0, 10)))
      return (this.fail(field, 'must be a date (YYYY-MM-DD) or an ISO 8601 instant'), undefined);
    return ms;
  }
}

/** Reads and checks the parameters; every problem is reported, not just the first. */
export function parseV1DealQuery(params: Record<string, unknown>): V1DealQuery {
  const r = new Reader(params);
  const state = r.text('state');
  if (state !== undefined && !(WORKFLOW_STATES as readonly string[]).includes(state))
    r.fail('state', `must be one of ${WORKFLOW_STATES.join(', ')}`);
  const showAll = r.flag('show_all');
  if (showAll === false) r.fail('show_all', 'takes true only');
  const excludeSoldout = r.flag('exclude_soldout');
  if (excludeSoldout === false) r.fail('exclude_soldout', 'takes true only');
  const cardLinksRedeemed = r.flag('card_links_redeemed');
  if (cardLinksRedeemed === true) r.fail('card_links_redeemed', 'takes false only');
  const latitude = r.decimal('latitude');
  const longitude = r.decimal('longitude');
  const radius = r.decimal('radius');
  if ((latitude === undefined) !== (longitude === undefined))
    r.fail(latitude === undefined ? 'latitude' : 'longitude', 'must be given together with the other coordinate', 'missing_field');
  if (latitude !== undefined && Math.abs(latitude) > 90) r.fail('latitude', 'must be from -90 to 90');
  if (longitude !== undefined && Math.abs(longitude) > 180) r.fail('longitude', 'must be from -180 to 180');
  if (radius !== undefined && !(radius > 0 && radius <= 12_500)) r.fail('radius', 'must be more than 0 miles, at most 12500');
  if (radius !== undefined && latitude === undefined && longitude === undefined) r.fail('radius', 'needs latitude and longitude');
  const region = r.text('region');
  const user = r.text('user');
  if (user !== undefined && (cardLinksRedeemed !== false || region === undefined)) {
    r.fail('user', 'needs card_links_redeemed=false and a region', 'missing_field');
  }
  const query: V1DealQuery = {
    slug: r.text('slug'),
    marketplaceSlug: r.text('marketplace_slug'),
    title: r.text('title'),
    state: state as WorkflowState | undefined,
    showAll: showAll === true,
    category: r.text('category'),
    subcategory: r.text('subcategory'),
    merchant: r.text('merchant'),
    priceMin: r.whole('price_min'),
    priceMax: r.whole('price_max'),
    region,
    near: latitude !== undefined && longitude !== undefined ? { latitude, longitude, miles: radius ?? DEFAULT_RADIUS_MILES } : undefined,
    user,
    suppliers: r.list('suppliers'),
    vendors: r.list('vendors'),
    numLeft: r.whole('num_left'),
    excludeSoldout: excludeSoldout === true,
    runsMin: r.instant('runs_min'),
    runsMax: r.instant('runs_max'),
    excludeCardLinked: cardLinksRedeemed === false,
  };
  if (r.issues.length) throw new ValidationFailed(r.issues);
  return query;
}

/** The view filter of a v1 deal list; `regionIds` is what `region` resolved to. */
export function v1Filter(q: V1DealQuery, now: number, regionIds: string[] | null): ViewFilter {
  const parts: ViewFilter[] = [];
  if (q.state) parts.push(effectiveStateFilter(q.state, now));
  else if (!q.showAll) parts.push(onSaleFilter(now));
  if (q.slug !== undefined) parts.push({ _id: q.slug });
  if (q.marketplaceSlug !== undefined) parts.push({ marketplaceSlug: q.marketplaceSlug });
  if (q.title !== undefined) parts.push({ title: containsText(q.title) });
  if (q.category !== undefined) parts.push({ categoryKey: containsText(q.category) });
  if (q.subcategory !== undefined) parts.push({ subcategoryKey: containsText(q.subcategory) });
  if (q.merchant !== undefined) parts.push({ merchantName: containsText(q.merchant) });
  if (q.priceMin !== undefined) parts.push({ price: { $gte: q.priceMin } });
  if (q.priceMax !== undefined) parts.push({ price: { $lte: q.priceMax } });
  if (regionIds !== null) parts.push({ regionId: { $in: regionIds } });
  if (q.near) parts.push(withinMiles(q.near.latitude, q.near.longitude, q.near.miles));
  if (q.suppliers) parts.push({ supplierId: { $in: q.suppliers } });
  if (q.vendors) parts.push({ vendorId: { $in: q.vendors } });
  if (q.numLeft !== undefined) parts.push({ numLeft: { $gte: q.numLeft } });
  if (q.excludeSoldout) parts.push({ soldOut: false });
  if (q.runsMin !== undefined) parts.push({ endAt: { $gte: q.runsMin } });
  if (q.runsMax !== undefined) parts.push({ startAt: { $lte: q.runsMax } });
  if (q.excludeCardLinked) parts.push({ type: { $ne: 'card-linked' } });
  return mergeFilters(parts);
}
