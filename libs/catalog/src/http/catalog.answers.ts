import { z } from 'zod';
import { IMAGE_SIZES } from './deal-v1.answers';

/** Answer schemas of the catalogue's calls (deals, locations, regions), as the API description shows them. */

const deprecated = (replacement: string, unit = '') => ({ deprecated: true, description: `deprecated: use ${replacement}${unit}` });
const text = z.string();
/** An amount of money: integer cents. */
const cents = z.number().int().meta({ description: 'cents' });
const nullableCents = (description: string) =>
  z
    .number()
    .int()
    .nullable()
    .meta({ description: `${description}, cents` });
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
const locationV1 = z
  .object({ address: z.object(address), hours: text, phone: text })
  .meta({ id: 'Location', description: 'a place where the deal is redeemed' });

const image = z.object({ size: text, dimensions: text, url: text });

const workflowState = z
  .enum(['submitted', 'in-review', 'rejected', 'approved', 'in-flight', 'paused', 'cancelled', 'landed', 'deleted'])
  .meta({ id: 'DealState', description: "the deal's workflow state; only in-flight deals are on sale" });

/** The v1 deal. Card-linked terms appear on card-linked deals only; `fine_print_legalese` on printed ones. */
export const dealV1 = z
  .object({
    id: text,
    slug: text.meta(deprecated('id')),
    deal_id: text.meta(deprecated('id')),
    affinity_score: z.number(),
    campaign: text,
    category: text,
    subcategory: text,
    // `nullable` on a member, not a `null` member: the latter becomes `enum: [null]`, which some client generators cannot write.
    category_id: z.union([z.number().nullable(), z.string()]),
    subcategory_id: z.union([z.number().nullable(), z.string()]),
    combine_linked_offers: z.unknown().meta({ description: 'appears in answers, kept for compatibility; it has no defined meaning' }),
    custom_data: z.record(z.string(), z.unknown()),
    current_price: cents.meta({ description: 'current price, cents' }),
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
    starting_price: cents.meta(deprecated('current_price', ' (cents)')),
    state: workflowState,
    supplier_id: text,
    supplier_slug: text.meta(deprecated('supplier_id')),
    tags: z.array(text),
    title: text,
    type: z.enum(['daily-deal', 'on-going', 'card-linked', 'affiliate']),
    value: cents.meta({ description: 'value of the deal, cents' }),
    fixed_fee: nullableCents('fee for running the deal (card-linked only)').optional(),
    incentive_amount: nullableCents('flat discount (card-linked only)').optional(),
    incentive_percentage: z.number().nullable().optional(),
    max_linkage: nullableInt.optional(),
    maximum_allowance: nullableCents('maximum value of a purchase (card-linked only)').optional(),
    min_spend: nullableCents('minimum purchase value to qualify (card-linked only)').optional(),
    num_qualifying: nullableInt.optional(),
    offer_construct: text.nullable().optional(),
    percent_fee: z.number().nullable().optional(),
  })
  .meta({ id: 'DealV1', description: 'a deal, v1 shape: /v1 calls, /deals/{deal_id}, /deals/locate, regional lists' });

const IMAGES = 'https://images.example.com/images/deals';
const SITE = 'https://deals.example.com/deals';

/** A whole v1 deal, as GET /deals/{deal_id} answers it (an example the description's lint checks against DealV1). */
const EXAMPLE_DEAL = {
  id: 'chicago-spa-day',
  slug: 'chicago-spa-day',
  deal_id: 'chicago-spa-day',
  affinity_score: 4.2,
  campaign: 'summer-wellness',
  category: 'Health & Beauty',
  subcategory: 'Spa',
  category_id: 7,
  subcategory_id: 71,
  combine_linked_offers: null,
  custom_data: {},
  current_price: 4900,
  description1: 'A day of massages and steam rooms for one.',
  description2: 'Book a week ahead; weekends fill first.',
  end_at: '2026-06-30T00:00:00Z',
  ended: false,
  expires_at: '2026-12-31T23:59:59-06:00',
  fine_print: 'One per visit. Appointment required.',
  fine_print_legalese: 'Not redeemable for cash.',
  fulfillment_method: 'printed',
  highlights: 'Three treatments, robe and slippers',
  image_url: '/images/deals/chicago-spa-day.jpg',
  image_url_abs: `${IMAGES}/chicago-spa-day.jpg`,
  instructions: 'Print the coupon and bring it to the front desk.',
  locations: [
    {
      address: {
        region: 'IL',
        postal_code: '60611',
        street: '100 E Walton St',
        latitude: 41.9,
        locality: 'Chicago',
        longitude: -87.625,
        country: 'US',
      },
      hours: 'Mon-Sat 9-21',
      phone: '+1 312 555 0100',
    },
  ],
  low_down: 'A day of massages and steam rooms for one.',
  max_per_user: 2,
  max_gift_per_user: 1,
  merchant_name: 'Walton Spa',
  num_left: 42,
  number_sold: 58,
  soldout: false,
  purchasable_number: 2,
  primary_image: Object.fromEntries(
    Object.entries(IMAGE_SIZES).map(([size, dimensions]) => [size, { size, dimensions, url: `${IMAGES}/${size}/chicago-spa-day.jpg` }]),
  ),
  purchase_url: `${SITE}/chicago-spa-day/purchase`,
  region_id: 'chicago',
  region_name: 'Chicago',
  region_slug: 'chicago',
  robotitle: 'A day at the spa in Chicago',
  shipping_address_required: false,
  show_url: `${SITE}/chicago-spa-day`,
  situation: 'Book a week ahead; weekends fill first.',
  start_at: '2026-06-01T00:00:00Z',
  starting_price: 4900,
  state: 'in-flight',
  supplier_id: 'walton-spa',
  supplier_slug: 'walton-spa',
  tags: ['spa', 'wellness'],
  title: 'A day at the spa',
  type: 'daily-deal',
  value: 12000,
};

/** `{status, count}`: a list call's answer with `count=true` (docs/api.md, Paging). */
const countAnswer = z.object({ status: z.literal('success'), count: z.number().int() });

export const DealAnswer = z
  .object({ status: z.literal('success'), deal: dealV1 })
  .meta({ example: { status: 'success', deal: EXAMPLE_DEAL } });

export const DealListAnswer = z
  .union([z.object({ status: z.literal('success'), deals: z.array(dealV1) }), countAnswer])
  .meta({ example: { status: 'success', deals: [EXAMPLE_DEAL] } });

const partial = <T extends z.ZodRawShape>(shape: T) => z.object(shape).partial();

/**
 * The v3 deal: the attributes `fields` asked for (every one that applies when none were), sub-fields
 * picked from hashes and lists; an attribute asked for that does not apply to the deal is null.
 */
export const dealV3 = partial({
  id: text,
  campaign: text,
  category: text,
  category_id: text.nullable(),
  cost: nullableCents('cost of the deal'),
  description1: text,
  description2: text,
  end_at: text,
  expiration_days: nullableInt,
  expires_at: text.nullable(),
  fine_print: text,
  fine_print_legalese: text.nullable(),
  fixed_fee: nullableCents('fee for running the deal (card-linked only)'),
  fulfillment_method: text,
  highlights: text,
  images: z.record(z.string(), text.nullable()),
  incentive_amount: nullableCents('flat discount (card-linked only)'),
  incentive_percentage: z.number().nullable(),
  instructions: text,
  locations: z
    .array(z.record(z.string(), z.unknown()))
    .meta({ description: 'Location objects with address.address_id; only the sub-fields asked for (locations[address,phone])' }),
  max_linkage: nullableInt,
  max_per_user: nullableInt,
  max_gift_per_user: nullableInt,
  maximum_allowance: nullableCents('maximum value of a purchase (card-linked only)'),
  merchant_id: text,
  merchant_name: text,
  min_spend: nullableCents('minimum purchase value to qualify (card-linked only)'),
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
  starting_price: cents.meta(deprecated('current_price', ' (cents)')),
  state: text,
  subcategory: text,
  subcategory_id: text.nullable(),
  supplier_id: text,
  tags: z.array(text),
  title: text,
  type: text,
  value: cents.meta({ description: 'value of the deal, cents' }),
}).meta({
  id: 'DealV3',
  description: 'a deal, v3 shape: the attributes `fields` asked for, every one that applies when none were',
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

const region = z
  .object({ id: text.meta({ description: 'the region slug' }), active: z.boolean(), name: text })
  .meta({ id: 'Region', description: 'a region' });

export const RegionAnswer = z
  .object({ status: z.literal('success'), region })
  .meta({ example: { status: 'success', region: { id: 'chicago', active: true, name: 'Chicago' } } });

export const RegionListAnswer = z
  .object({ status: z.literal('success'), regions: z.array(region) })
  .meta({ example: { status: 'success', regions: [{ id: 'chicago', active: true, name: 'Chicago' }] } });
