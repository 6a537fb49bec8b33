import { z } from 'zod';
import { IMAGE_SIZES } from './deal-v1.answers';

/** Answer schemas of the catalogue's calls (parts 2.1 to 2.4, 2.12), as the API description shows them. */

const deprecated = (replacement: string) => ({ deprecated: true, description: `deprecated: use ${replacement}` });
const text = z.string();
const cents = z.number().int();
const nullableInt = z.number().int().nullable();

const address = {
  region: text,
  postal_code: text,
  street: text,
  latitude: z.number().nullable(),
  locality: text,
  longitude: z.number().nullable(),
  country: text,
};
const locationV1 = z.object({ address: z.object(address), hours: text, phone: text });

const image = z.object({ size: text, dimensions: text, url: text });

const workflowState = z.enum(['submitted', 'in-review', 'rejected', 'approved', 'in-flight', 'paused', 'cancelled', 'landed', 'deleted']);

/** Part 2.1. Card-linked terms appear on card-linked deals only; `fine_print_legalese` on printed ones. */
export const dealV1 = z.object({
  id: text,
  slug: text.meta(deprecated('id')),
  deal_id: text.meta(deprecated('id')),
  affinity_score: z.number(),
  campaign: text,
  category: text,
  subcategory: text,
  category_id: z.union([z.number(), z.string(), z.null()]),
  subcategory_id: z.union([z.number(), z.string(), z.null()]),
  combine_linked_offers: z.unknown().meta({ description: 'appears in answers; its meaning is not given (part 2.1)' }),
  custom_data: z.record(z.string(), z.unknown()),
  current_price: cents,
  description1: text,
  description2: text,
  end_at: text.meta({ description: 'UTC, ISO 8601' }),
  ended: z.boolean(),
  expires_at: text.nullable().meta({ description: "voucher expiry, in the time zone of the deal's region" }),
  fine_print: text,
  fine_print_legalese: text.optional(),
  fulfillment_method: z.enum(['redemptioncoded', 'printed', 'shipped']),
  highlights: text,
  image_url: text.meta(deprecated('image_url_abs or primary_image')),
  image_url_abs: text,
  instructions: text,
  locations: z.array(locationV1),
  low_down: text.meta(deprecated('description1')),
  max_per_user: nullableInt,
  max_gift_per_user: nullableInt,
  merchant_name: text,
  num_left: z.number().int(),
  number_sold: z.number().int(),
  soldout: z.boolean(),
  purchasable_number: z.number().int(),
  primary_image: z.object(Object.fromEntries(Object.keys(IMAGE_SIZES).map((size) => [size, image]))),
  purchase_url: text,
  region_id: text,
  region_name: text,
  region_slug: text.meta(deprecated('region_id')),
  robotitle: text,
  shipping_address_required: z.boolean(),
  show_url: text,
  situation: text.meta(deprecated('description2')),
  start_at: text,
  starting_price: cents.meta(deprecated('current_price')),
  state: workflowState,
  supplier_id: text,
  supplier_slug: text.meta(deprecated('supplier_id')),
  tags: z.array(text),
  title: text,
  type: z.enum(['daily-deal', 'on-going', 'card-linked', 'affiliate']),
  value: cents,
  fixed_fee: nullableInt.optional(),
  incentive_amount: nullableInt.optional(),
  incentive_percentage: z.number().nullable().optional(),
  max_linkage: nullableInt.optional(),
  maximum_allowance: nullableInt.optional(),
  min_spend: nullableInt.optional(),
  num_qualifying: nullableInt.optional(),
  offer_construct: text.nullable().optional(),
  percent_fee: z.number().nullable().optional(),
});

const EXAMPLE_DEAL = {
  id: 'chicago-spa-day',
  title: 'A day at the spa',
  type: 'daily-deal',
  current_price: 4900,
  value: 12000,
  state: 'in-flight',
  num_left: 42,
  region_id: 'chicago',
  start_at: '2026-06-01T00:00:00Z',
  end_at: '2026-06-30T00:00:00Z',
};

/** `{status, count}`: a list call's answer with `count=true` (part 4.1). */
const countAnswer = z.object({ status: z.literal('success'), count: z.number().int() });

export const DealAnswer = z
  .object({ status: z.literal('success'), deal: dealV1 })
  .meta({ example: { status: 'success', deal: { ...EXAMPLE_DEAL, '…': 'every field of part 2.1' } } });

export const DealListAnswer = z
  .union([z.object({ status: z.literal('success'), deals: z.array(dealV1) }), countAnswer])
  .meta({ example: { status: 'success', deals: [{ ...EXAMPLE_DEAL, '…': 'every field of part 2.1' }] } });

const partial = <T extends z.ZodRawShape>(shape: T) => z.object(shape).partial();

/**
 * Part 2.3: the attributes `fields` asked for (every one that applies when none were), sub-fields
 * picked from hashes and lists; an attribute asked for that does not apply to the deal is null.
 */
export const dealV3 = partial({
  id: text,
  campaign: text,
  category: text,
  category_id: text.nullable(),
  cost: nullableInt,
  description1: text,
  description2: text,
  end_at: text,
  expiration_days: nullableInt,
  expires_at: text.nullable(),
  fine_print: text,
  fine_print_legalese: text.nullable(),
  fixed_fee: nullableInt,
  fulfillment_method: text,
  highlights: text,
  images: z.record(z.string(), text.nullable()),
  incentive_amount: nullableInt,
  incentive_percentage: z.number().nullable(),
  instructions: text,
  locations: z.array(z.record(z.string(), z.unknown())),
  max_linkage: nullableInt,
  max_per_user: nullableInt,
  max_gift_per_user: nullableInt,
  maximum_allowance: nullableInt,
  merchant_id: text,
  merchant_name: text,
  min_spend: nullableInt,
  num_left: z.number().int(),
  num_qualifying: nullableInt,
  number_sold: z.number().int(),
  percent_fee: z.number().nullable(),
  purchase_url: text,
  region_id: text,
  region_name: text,
  robotitle: text,
  shipping_address_required: z.boolean(),
  show_url: text,
  sold_out: z.boolean(),
  soldout: z.boolean(),
  start_at: text,
  starting_price: cents.meta(deprecated('current_price')),
  state: text,
  subcategory: text,
  subcategory_id: text.nullable(),
  supplier_id: text,
  tags: z.array(text),
  title: text,
  type: text,
  value: cents,
});

export const DealV3ListAnswer = z
  .object({
    deals: z.array(dealV3),
    next_page: text.nullable().meta({ description: 'the next page, with the same fields, filter and sort; null on the last' }),
  })
  .meta({
    example: {
      deals: [{ id: 'chicago-spa-day', title: 'A day at the spa', images: { small: 'https://images.example.com/small/spa.jpg' } }],
      next_page: 'https://localhost:3000/api/v3/deals?fields=id%2Ctitle%2Cimages%5Bsmall%5D&page=2&per_page=100',
    },
  });

const region = z.object({ id: text, active: z.boolean(), name: text });

export const RegionAnswer = z
  .object({ status: z.literal('success'), region })
  .meta({ example: { status: 'success', region: { id: 'chicago', active: true, name: 'Chicago' } } });

export const RegionListAnswer = z
  .object({ status: z.literal('success'), regions: z.array(region) })
  .meta({ example: { status: 'success', regions: [{ id: 'chicago', active: true, name: 'Chicago' }] } });
