import type { ValidationIssue } from '@deals/kernel';

export const DEAL_TYPES = ['daily-deal', 'on-going', 'affiliate', 'card-linked'] as const;
export type DealType = (typeof DEAL_TYPES)[number];

export const FULFILLMENT_METHODS = ['redemptioncoded', 'printed', 'shipped'] as const;
export type FulfillmentMethod = (typeof FULFILLMENT_METHODS)[number];

export const WORKFLOW_STATES = [
  'submitted',
  'in-review',
  'rejected',
  'approved',
  'in-flight',
  'paused',
  'cancelled',
  'landed',
  'deleted',
] as const;
export type WorkflowState = (typeof WORKFLOW_STATES)[number];

export interface DealLocation {
  address: {
    street?: string;
    locality?: string;
    region?: string;
    postal_code?: string;
    country?: string;
    latitude?: number;
    longitude?: number;
    address_id?: string;
  };
  hours?: string;
  phone?: string;
}

/**
 * What the catalogue knows of a deal, named as the v1 deal names them (deprecated aliases
 * and live figures are derived, never stored). Money is integer cents; instants are ISO 8601 UTC.
 */
export interface DealTerms {
  id: string;
  title: string;
  type: DealType;
  category?: string;
  subcategory?: string;
  category_id?: number | string;
  subcategory_id?: number | string;
  campaign?: string;
  affinity_score?: number;
  current_price: number;
  value: number;
  cost?: number;
  description1?: string;
  description2?: string;
  highlights?: string;
  fine_print?: string;
  fine_print_legalese?: string;
  instructions?: string;
  start_at: string;
  end_at: string;
  expires_at?: string;
  expiration_days?: number;
  fulfillment_method: FulfillmentMethod;
  shipping_address_required?: boolean;
  image_url?: string;
  locations?: DealLocation[];
  max_per_user?: number;
  max_gift_per_user?: number;
  merchant_name?: string;
  merchant_id?: string;
  region_id: string;
  supplier_id?: string;
  vendor_id?: string;
  marketplace_slug?: string;
  robotitle?: string;
  tags?: string[];
  custom_data?: Record<string, unknown>;
  combine_linked_offers?: unknown;
  fixed_fee?: number;
  incentive_amount?: number;
  incentive_percentage?: number;
  max_linkage?: number;
  maximum_allowance?: number;
  min_spend?: number;
  num_qualifying?: number;
  offer_construct?: string;
  percent_fee?: number;
}

const CENTS_FIELDS = ['current_price', 'value', 'cost', 'fixed_fee', 'incentive_amount', 'maximum_allowance', 'min_spend'] as const;
const COUNT_FIELDS = [
  'max_per_user',
  'max_gift_per_user',
  'max_linkage',
  'num_qualifying',
  'expiration_days',
  'incentive_percentage',
  'percent_fee',
] as const;
const TEXT_FIELDS = [
  'category',
  'subcategory',
  'campaign',
  'description1',
  'description2',
  'highlights',
  'fine_print',
  'fine_print_legalese',
  'instructions',
  'image_url',
  'merchant_name',
  'merchant_id',
  'supplier_id',
  'vendor_id',
  'marketplace_slug',
  'robotitle',
  'offer_construct',
] as const;
export const SLUG = /^[a-z0-9][a-z0-9_-]{0,127}$/;
/** A deal's title is shown in every list; its other texts (fine print, instructions) on its page. */
const MAX_TITLE = 500;
const MAX_TEXT = 20_000;
const isInstant = (value: unknown) => typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value) && !Number.isNaN(Date.parse(value));

/** Checks deal terms as the catalogue accepts them; returns every problem, not just the first. */
export function validateDealTerms(terms: Partial<DealTerms>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const fail = (field: string, message: string, type: ValidationIssue['type'] = 'invalid') =>
    issues.push({ type, message, resource: 'deal', field });
  const record = terms as Record<string, unknown>;
  if (typeof terms.id !== 'string' || !SLUG.test(terms.id)) fail('id', 'must be a slug of lower-case letters, digits, - and _');
  if (typeof terms.title !== 'string' || terms.title.trim() === '') fail('title', 'is required', 'missing_field');
  if (!DEAL_TYPES.includes(terms.type as DealType)) fail('type', `must be one of ${DEAL_TYPES.join(', ')}`);
  if (!FULFILLMENT_METHODS.includes(terms.fulfillment_method as FulfillmentMethod)) {
    fail('fulfillment_method', `must be one of ${FULFILLMENT_METHODS.join(', ')}`);
  }
  if (typeof terms.region_id !== 'string' || !SLUG.test(terms.region_id)) fail('region_id', 'is required', 'missing_field');
  for (const field of ['current_price', 'value'] as const) if (record[field] === undefined) fail(field, 'is required', 'missing_field');
  for (const field of CENTS_FIELDS) {
    const v = record[field];
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 0)) fail(field, 'must be a whole number of cents, not negative');
  }
  for (const field of COUNT_FIELDS) {
    const v = record[field];
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 0)) fail(field, 'must be a whole number, not negative');
  }
  for (const field of TEXT_FIELDS) {
    const v = record[field];
    if (v === undefined) continue;
    if (typeof v !== 'string') fail(field, 'must be text');
    else if (v.length > MAX_TEXT) fail(field, `must be at most ${MAX_TEXT.toLocaleString('en-US')} characters`);
  }
  if (typeof terms.title === 'string' && terms.title.length > MAX_TITLE) fail('title', `must be at most ${MAX_TITLE} characters`);
  for (const field of ['start_at', 'end_at'] as const)
    if (!isInstant(terms[field])) fail(field, 'must be an ISO 8601 instant', terms[field] === undefined ? 'missing_field' : 'invalid');
  if (terms.expires_at !== undefined && !isInstant(terms.expires_at)) fail('expires_at', 'must be an ISO 8601 instant');
  if (isInstant(terms.start_at) && isInstant(terms.end_at) && Date.parse(terms.end_at!) <= Date.parse(terms.start_at!)) {
    fail('end_at', 'must be after start_at');
  }
  const score = terms.affinity_score;
  if (score !== undefined && !(typeof score === 'number' && score >= 0 && score <= 5))
    fail('affinity_score', 'must be a number from 0 to 5');
  if (terms.fine_print_legalese !== undefined && terms.fulfillment_method !== 'printed') {
    fail('fine_print_legalese', 'is only for deals with fulfillment_method printed');
  }
  if (terms.tags !== undefined && !(Array.isArray(terms.tags) && terms.tags.every((t) => typeof t === 'string')))
    fail('tags', 'must be a list of text');
  if (
    terms.custom_data !== undefined &&
    (typeof terms.custom_data !== 'object' || terms.custom_data === null || Array.isArray(terms.custom_data))
  ) {
    fail('custom_data', 'must be an object');
  }
  if (terms.locations !== undefined) {
    if (!Array.isArray(terms.locations)) fail('locations', 'must be a list');
    else
      terms.locations.forEach((location, i) => {
        const { latitude, longitude } = location?.address ?? {};
        if (latitude !== undefined && !(typeof latitude === 'number' && Math.abs(latitude) <= 90))
          // eslint-disable-next-line no-restricted-syntax -- a field's position, not its value
          fail(`locations[${i}].address.latitude`, 'must be from -90 to 90');
        if (longitude !== undefined && !(typeof longitude === 'number' && Math.abs(longitude) <= 180))
          // eslint-disable-next-line no-restricted-syntax -- a field's position, not its value
          fail(`locations[${i}].address.longitude`, 'must be from -180 to 180');
      });
  }
  return issues;
}
