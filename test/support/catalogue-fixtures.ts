import type { RegionTerms } from '@deals/catalog';
import type { DealImportRecord } from '@deals/runtime';

export const chicago: RegionTerms = {
  id: 'chicago', name: 'Chicago', active: true, city: 'Chicago', state: 'IL', time_zone: 'America/Chicago',
  latitude: 41.8781, longitude: -87.6298, postal_codes: ['60601', '60602'],
};
export const honolulu: RegionTerms = {
  id: 'honolulu', name: 'Honolulu', active: false, city: 'Honolulu', state: 'HI', time_zone: 'Pacific/Honolulu',
  latitude: 21.3069, longitude: -157.8583, postal_codes: ['96813'],
};

/** A printed daily deal in Chicago, on sale at the harness clock's 2026-06-15T12:00Z. */
export const spaDay: DealImportRecord = {
  id: 'chicago-spa-day',
  title: 'Spa day for two',
  type: 'daily-deal',
  state: 'in-flight',
  category: 'Health & Beauty',
  subcategory: 'Spa',
  category_id: 2,
  subcategory_id: 201,
  campaign: 'summer-2026',
  affinity_score: 4.2,
  current_price: 4900,
  value: 12000,
  cost: 2500,
  description1: 'A day of calm.',
  description2: 'For two people.',
  highlights: 'Massage; sauna',
  fine_print: 'Limit 2 per person.',
  fine_print_legalese: 'Void where prohibited.',
  instructions: 'Print the coupon.',
  start_at: '2026-06-14T05:00:00Z',
  end_at: '2026-06-18T05:00:00Z',
  expires_at: '2026-12-31T23:59:00Z',
  fulfillment_method: 'printed',
  image_url: '/images/deals/chicago-spa-day.jpg',
  locations: [
    { address: { street: '1 Lake St', locality: 'Chicago', region: 'IL', postal_code: '60601', country: 'US', latitude: 41.886, longitude: -87.627 }, hours: '9-5', phone: '(312) 555-0100' },
  ],
  max_per_user: 2,
  max_gift_per_user: 1,
  merchant_name: 'Calm Spa',
  merchant_id: 'calm-spa',
  region_id: 'chicago',
  supplier_id: 'acme-supply',
  robotitle: 'Spa day Chicago',
  tags: ['spa', 'couples'],
  custom_data: { source: 'test' },
  quantity: 50,
};

/** A card-linked offer in Chicago. */
export const cardLinked: DealImportRecord = {
  id: 'chicago-coffee-back',
  title: 'Spend $20, get $5 back',
  type: 'card-linked',
  state: 'in-flight',
  current_price: 0,
  value: 500,
  start_at: '2026-06-01T00:00:00Z',
  end_at: '2026-07-31T00:00:00Z',
  fulfillment_method: 'redemptioncoded',
  region_id: 'chicago',
  merchant_name: 'Bean There',
  fixed_fee: 25,
  incentive_amount: 500,
  max_linkage: 1000,
  maximum_allowance: 500,
  min_spend: 2000,
  num_qualifying: 1,
  offer_construct: 'Spend $20, get $5 back',
  percent_fee: 10,
  quantity: 1000,
};

export const ongoingShipped: DealImportRecord = {
  id: 'chicago-headphones',
  title: 'Wireless headphones',
  type: 'on-going',
  state: 'in-flight',
  current_price: 3999,
  value: 9999,
  start_at: '2026-05-01T00:00:00Z',
  end_at: '2026-08-01T00:00:00Z',
  fulfillment_method: 'shipped',
  shipping_address_required: true,
  region_id: 'chicago',
  max_per_user: 3,
  quantity: 2,
};

export const affiliate: DealImportRecord = {
  id: 'chicago-free-trial',
  title: 'Free streaming trial',
  type: 'affiliate',
  state: 'approved',
  current_price: 0,
  value: 1500,
  start_at: '2026-06-20T00:00:00Z',
  end_at: '2026-07-20T00:00:00Z',
  fulfillment_method: 'redemptioncoded',
  region_id: 'chicago',
  quantity: 0,
};
