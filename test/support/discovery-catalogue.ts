import type { RegionTerms } from '@deals/catalog';
import type { DealImportRecord } from '@deals/runtime';

/** The harness clock for discovery tests. */
export const NOW = Date.parse('2026-06-15T12:00:00Z');

export const regions: RegionTerms[] = [
  {
    id: 'chicago',
    name: 'Chicago',
    active: true,
    city: 'Chicago',
    state: 'IL',
    time_zone: 'America/Chicago',
    latitude: 41.8781,
    longitude: -87.6298,
    postal_codes: ['60601', '60602'],
  },
  {
    id: 'san-francisco',
    name: 'San Francisco',
    active: true,
    city: 'San Francisco',
    state: 'CA',
    time_zone: 'America/Los_Angeles',
    latitude: 37.7749,
    longitude: -122.4194,
    postal_codes: ['94102'],
  },
  {
    id: 'new-york',
    name: 'New York',
    active: true,
    city: 'New York',
    state: 'NY',
    time_zone: 'America/New_York',
    latitude: 40.7128,
    longitude: -74.006,
    postal_codes: ['10001'],
  },
  {
    id: 'honolulu',
    name: 'Honolulu',
    active: false,
    city: 'Honolulu',
    state: 'HI',
    time_zone: 'Pacific/Honolulu',
    latitude: 21.3069,
    longitude: -157.8583,
    postal_codes: ['96813'],
  },
];

const at = (day: string) => `2026-${day}:00Z`;
const place = (latitude: number, longitude: number) => ({
  address: { street: '1 Main St', locality: 'x', region: 'XX', postal_code: '00000', country: 'US', latitude, longitude },
});

function deal(id: string, overrides: Partial<DealImportRecord>): DealImportRecord {
  return {
    id,
    title: id.replace(/-/g, ' '),
    type: 'daily-deal',
    state: 'in-flight',
    category: 'Food & Drink',
    subcategory: 'Restaurants',
    current_price: 2000,
    value: 5000,
    start_at: at('06-14T00:00'),
    end_at: at('06-18T00:00'),
    fulfillment_method: 'redemptioncoded',
    region_id: 'chicago',
    merchant_name: `${id} merchant`,
    quantity: 10,
    ...overrides,
  };
}

/** Twelve deals; nine are on sale at NOW (not chi-future, chi-landed, chi-paused). */
export const deals: DealImportRecord[] = [
  deal('chi-spa', {
    title: 'Spa day for two',
    category: 'Health & Beauty',
    subcategory: 'Spa',
    current_price: 4900,
    merchant_name: 'Calm Spa',
    locations: [place(41.886, -87.627)],
    quantity: 50,
  }),
  deal('chi-dinner', {
    title: 'Dinner at Harbor Grill',
    current_price: 3000,
    start_at: at('06-10T00:00'),
    end_at: at('06-20T00:00'),
    locations: [place(41.9, -87.65)],
    quantity: 0,
    supplier_id: 'acme-supply',
  }),
  deal('chi-bg', {
    title: 'Coffee background filler',
    subcategory: 'Cafe',
    current_price: 1000,
    start_at: at('06-12T00:00'),
    end_at: at('06-30T00:00'),
    tags: ['bg'],
  }),
  deal('chi-future', { state: 'approved', start_at: at('06-20T00:00'), end_at: at('06-25T00:00') }),
  deal('chi-approved-now', {
    title: 'Pizza night',
    state: 'approved',
    current_price: 2500,
    start_at: at('06-15T00:00'),
    end_at: at('07-01T00:00'),
    tags: ['pizza'],
  }),
  deal('chi-landed', { start_at: at('06-01T00:00'), end_at: at('06-10T00:00') }),
  deal('chi-paused', { state: 'paused', start_at: at('06-01T00:00'), end_at: at('07-01T00:00') }),
  deal('chi-cancelled', { state: 'cancelled', start_at: at('06-01T00:00'), end_at: at('07-01T00:00') }),
  deal('sf-tour', {
    title: 'Bay tour',
    category: 'Activities',
    subcategory: 'Tours',
    current_price: 7500,
    region_id: 'san-francisco',
    start_at: at('06-13T00:00'),
    end_at: at('06-22T00:00'),
    locations: [place(37.79, -122.4)],
    vendor_id: 'tours-inc',
  }),
  deal('sf-card', {
    title: 'Spend $20 get $5 back',
    type: 'card-linked',
    current_price: 0,
    value: 500,
    region_id: 'san-francisco',
    start_at: at('06-01T00:00'),
    end_at: at('07-31T00:00'),
    quantity: 1000,
  }),
  deal('ny-headphones', {
    title: 'Wireless headphones',
    type: 'on-going',
    category: 'Products',
    subcategory: 'Electronics',
    current_price: 3999,
    fulfillment_method: 'shipped',
    region_id: 'new-york',
    start_at: at('05-01T00:00'),
    end_at: at('08-01T00:00'),
    quantity: 2,
    supplier_id: 'acme-supply',
    marketplace_slug: 'mkt-headphones',
  }),
  deal('ny-affiliate', {
    title: 'Free streaming trial',
    type: 'affiliate',
    current_price: 0,
    category: 'Activities',
    subcategory: 'Streaming',
    region_id: 'new-york',
    start_at: at('06-14T00:00'),
    end_at: at('07-14T00:00'),
  }),
  deal('ny-spa', {
    title: 'Luxury SPA retreat',
    category: 'Health & Beauty',
    subcategory: 'Spa',
    current_price: 12000,
    region_id: 'new-york',
    start_at: at('06-14T12:00'),
    end_at: at('06-16T00:00'),
    locations: [place(40.758, -73.9855)],
  }),
];

/** Independent of the service's code: which deals are on sale at NOW. */
export function onSale(d: DealImportRecord): boolean {
  const start = Date.parse(d.start_at);
  const end = Date.parse(d.end_at);
  return end > NOW && (d.state === 'in-flight' || (d.state === 'approved' && start <= NOW));
}

/** Great-circle miles by the haversine formula, written out here rather than imported. */
export function miles(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const r = (x: number) => (x * Math.PI) / 180;
  const h = Math.sin(r(lat2 - lat1) / 2) ** 2 + Math.cos(r(lat1)) * Math.cos(r(lat2)) * Math.sin(r(lng2 - lng1) / 2) ** 2;
  return 2 * 3963.2 * Math.asin(Math.sqrt(h));
}

export const within = (d: DealImportRecord, lat: number, lng: number, radius: number) =>
  (d.locations ?? []).some((l) => miles(lat, lng, l.address.latitude!, l.address.longitude!) <= radius);

export const ids = (list: DealImportRecord[]) => list.map((d) => d.id);
export const byStart = (a: DealImportRecord, b: DealImportRecord) =>
  Date.parse(a.start_at) - Date.parse(b.start_at) || (a.id < b.id ? -1 : 1);
export const byEndDesc = (a: DealImportRecord, b: DealImportRecord) =>
  Date.parse(b.end_at) - Date.parse(a.end_at) || (a.id < b.id ? -1 : 1);
