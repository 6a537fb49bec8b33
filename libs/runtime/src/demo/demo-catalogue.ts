/**
 * Deterministic demo catalogue (regions + deals) loaded on the first start of the service.
 * Everything derives from a seeded PRNG and the supplied `now`; there is no Math.random.
 */
import { DEAL_TYPES, DealLocation, DealType, FULFILLMENT_METHODS, FulfillmentMethod, RegionTerms, WorkflowState } from '@deals/catalog';
import type { DealImportRecord } from '../catalogue-import';
import cities from './us-cities.json';

/** A demo region: the catalogue's own region terms. */
export type RegionImport = RegionTerms;
/** A demo deal: an import record that always names its state and inventory. */
export type DealImport = DealImportRecord &
  Required<Pick<DealImportRecord, 'state' | 'quantity' | 'locations' | 'expires_at' | 'affinity_score'>>;
export { DEAL_TYPES, FULFILLMENT_METHODS };

const OTHER_STATES: readonly WorkflowState[] = ['approved', 'landed', 'paused', 'submitted', 'in-review'];

export function demoRegions(): RegionImport[] {
  return (cities as RegionImport[]).map((c) => ({ ...c, postal_codes: [...c.postal_codes] }));
}

/** [category, category_id, subcategory, subcategory_id, slug, item, min $, max $, merchants] */
type Template = [string, number, string, number, string, string, number, number, string[]];
const LOCAL: Template[] = [
  [
    'Food & Drink',
    1,
    'Restaurants',
    101,
    'dinner',
    'Three-Course Dinner for Two',
    25,
    80,
    ['Bella Cucina', 'The Copper Pot', 'Harbor Grill', 'Saffron House'],
  ],
  [
    'Food & Drink',
    1,
    'Bars & Breweries',
    102,
    'beer-flight',
    'Craft Beer Tasting Flights for Two',
    15,
    40,
    ['Hopworks Taproom', 'Barrel & Vine', 'Iron Anchor Brewing'],
  ],
  ['Food & Drink', 1, 'Cafes & Bakeries', 103, 'cafe', 'Coffee and Pastries for Two', 5, 20, ['Morning Crumb Bakery', 'Daily Grind Cafe']],
  [
    'Health & Beauty',
    2,
    'Spa',
    201,
    'spa-day',
    '60-Minute Swedish Massage',
    49,
    150,
    ['Serenity Day Spa', 'Lotus Wellness', 'Tranquil Touch Spa'],
  ],
  ['Health & Beauty', 2, 'Salon', 202, 'salon', 'Haircut, Wash and Blowout', 25, 90, ['Studio Luxe Salon', 'Mane Street Salon']],
  [
    'Health & Beauty',
    2,
    'Fitness',
    203,
    'fitness',
    'Ten Fitness Classes',
    29,
    120,
    ['Core Power Studio', 'Peak Performance Gym', 'Flow Yoga Loft'],
  ],
  ['Activities', 3, 'Tours', 301, 'city-tour', 'Guided Walking Tour for Two', 19, 70, ['Hidden Histories Tours', 'Urban Trail Walks']],
  [
    'Activities',
    3,
    'Escape Rooms & Games',
    302,
    'escape-room',
    'Escape Room Experience for Four',
    39,
    120,
    ['Lockout Escape Rooms', 'Puzzle Vault'],
  ],
  ['Activities', 3, 'Classes & Workshops', 303, 'pottery', 'Two-Hour Pottery Workshop', 35, 110, ['Clay & Kiln Studio', "Maker's Loft"]],
  ['Entertainment', 4, 'Live Events', 401, 'comedy', 'Two Tickets to a Comedy Show', 15, 60, ['The Chuckle Hut', 'Stand-Up Station']],
  ['Automotive', 5, 'Car Care', 501, 'car-detail', 'Full-Service Car Detail', 49, 180, ['Spotless Auto Spa', 'Gleam Team Detailing']],
  [
    'Home Services',
    6,
    'Cleaning',
    601,
    'cleaning',
    'Three Hours of House Cleaning',
    59,
    200,
    ['Sparkle Home Cleaning', 'Fresh Start Maids'],
  ],
  ['Travel', 7, 'Hotels', 701, 'hotel-stay', 'One-Night Stay with Breakfast', 99, 300, ['The Grand Meridian Hotel', 'Parkside Inn']],
];
const GOODS: Template[] = [
  [
    'Products',
    8,
    'Electronics',
    801,
    'headphones',
    'Wireless Noise-Cancelling Headphones',
    39,
    200,
    ['SoundWave Audio', 'Voltline Electronics'],
  ],
  [
    'Products',
    8,
    'Home & Kitchen',
    802,
    'cookware',
    '7-Piece Nonstick Cookware Set',
    29,
    150,
    ['Hearth & Home Goods', 'KitchenCraft Supply'],
  ],
  ['Products', 8, 'Apparel', 803, 'base-layer', 'Merino Wool Base Layer Set', 19, 120, ['Northbound Outfitters', 'Threadline Apparel']],
  ['Products', 8, 'Fitness Gear', 804, 'dumbbells', 'Adjustable Dumbbell Pair', 49, 300, ['IronForge Fitness Gear']],
  ['Products', 8, 'Toys & Games', 805, 'stem-kit', 'STEM Building Kit', 15, 80, ['Bright Minds Toys']],
];
const STREETS = [
  'Main St',
  'Market St',
  'Oak Ave',
  'Maple Ave',
  'Park Blvd',
  'Elm St',
  'Broadway',
  'Washington Ave',
  'Lake St',
  'Pine St',
  'Center St',
  '2nd St',
];
const HOURS = ['Mon-Fri 9am-9pm; Sat-Sun 10am-6pm', 'Daily 11am-10pm', 'Tue-Sun 10am-7pm; closed Mon', 'Mon-Sat 8am-8pm; Sun 9am-5pm'];
const SUPPLIERS: Record<DealType, string[]> = {
  'daily-deal': ['direct-sales', 'local-partners-inc'],
  'on-going': ['direct-sales', 'evergreen-offers'],
  affiliate: ['affiliate-network-east', 'affiliate-network-west'],
  'card-linked': ['cardlink-rewards', 'bank-offers-network'],
};
const AREA_CODES = Object.fromEntries(
  (
    'new-york:212 boston:617 philadelphia:215 washington-dc:202 atlanta:404 miami:305 orlando:407 tampa:813 ' +
    'charlotte:704 raleigh:919 detroit:313 columbus:614 indianapolis:317 louisville:502 chicago:312 houston:713 ' +
    'dallas:214 austin:512 san-antonio:210 minneapolis:612 st-louis:314 kansas-city:816 nashville:615 ' +
    'new-orleans:504 denver:303 salt-lake-city:801 albuquerque:505 boise:208 phoenix:602 tucson:520 ' +
    'los-angeles:213 san-francisco:415 san-diego:619 san-jose:408 sacramento:916 seattle:206 portland:503 ' +
    'las-vegas:702 anchorage:907 honolulu:808'
  )
    .split(' ')
    .map((p) => p.split(':')),
) as Record<string, string>;

const SEED = 0x5eed_d3a1;
const MIN = 60_000;
const DAY = 1440; // minutes

/** mulberry32: tiny deterministic PRNG returning floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
const usd = (cents: number) => (cents % 100 === 0 ? `$${cents / 100}` : `$${(cents / 100).toFixed(2)}`);

export function demoDeals(now: Date, count = 300): DealImport[] {
  const rng = mulberry32(SEED);
  const int = (lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1)); // inclusive
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];
  const regions = demoRegions();
  const nowMin = Math.floor(now.getTime() / MIN);
  const iso = (minutes: number) => new Date(minutes * MIN).toISOString();
  const deals: DealImport[] = [];

  for (let i = 0; i < count; i++) {
    // The first 12 deals cover every type x fulfilment combination; the rest are weighted draws.
    const r = rng();
    const type: DealType =
      i < 12 ? DEAL_TYPES[i % 4] : r < 0.45 ? 'daily-deal' : r < 0.7 ? 'on-going' : r < 0.85 ? 'affiliate' : 'card-linked';
    const m = rng();
    const method: FulfillmentMethod =
      i < 12 ? FULFILLMENT_METHODS[Math.floor(i / 4)] : m < 0.5 ? 'redemptioncoded' : m < 0.75 ? 'printed' : 'shipped';
    const region = i < regions.length ? regions[i] : pick(regions);
    // ~10% of deals are outside the in-flight state; deals in inactive regions have all landed.
    let state: WorkflowState = i % 10 === 9 ? OTHER_STATES[Math.floor(i / 10) % OTHER_STATES.length] : 'in-flight';
    if (!region.active) state = 'landed';

    const [category, category_id, subcategory, subcategory_id, tslug, item, lo, hi, merchants] = pick(method === 'shipped' ? GOODS : LOCAL);
    const merchant_name = pick(merchants);
    const id = `${region.id}-${tslug}-${String(i + 1).padStart(4, '0')}`;

    // Schedule, in whole minutes.
    const duration =
      type === 'daily-deal'
        ? int(2, 5) * DAY
        : type === 'on-going'
          ? int(20, 90) * DAY
          : type === 'affiliate'
            ? int(7, 30) * DAY
            : int(30, 90) * DAY;
    let start: number;
    if (state === 'in-flight' || state === 'paused') start = nowMin - int(60, duration - 60);
    else if (state === 'landed') start = nowMin - int(1, 20) * DAY - int(0, 600) - duration;
    else start = nowMin + int(1, 10) * DAY + int(0, 600); // approved / submitted / in-review start in the future
    const end = start + duration;
    const expiration_days = rng() < 0.35 ? pick([90, 120, 180]) : undefined;
    const expires = end + (expiration_days ?? int(60, 365)) * DAY;

    // Money, integer cents.
    const priceCents = int(lo, hi) * 100 - (rng() < 0.5 ? 1 : 0);
    let current_price = priceCents;
    let value = Math.round((priceCents * (1.5 + rng() * 1.5)) / 100) * 100;
    let cost = Math.round(priceCents * (0.45 + rng() * 0.25));
    let title = `${usd(current_price)} for ${item} at ${merchant_name} (${usd(value)} Value)`;
    let quantity = type === 'on-going' ? 100_000 : int(50, 1000);
    if (type === 'daily-deal' && rng() < 0.05) quantity = 0; // sold out at start
    const card: Partial<DealImport> = {};
    if (type === 'affiliate') {
      current_price = 0;
      cost = 0;
      quantity = 100_000;
      title = `Up to ${Math.round((1 - priceCents / value) * 100)}% Off ${item} at ${merchant_name}`;
    } else if (type === 'card-linked') {
      const min_spend = int(2, 10) * 1000;
      const num_qualifying = int(1, 3);
      const max_linkage = int(5, 50) * 1000;
      const byAmount = rng() < 0.6;
      const incentive_amount = byAmount ? Math.round((min_spend * int(10, 30)) / 100 / 100) * 100 : undefined;
      const incentive_percentage = byAmount ? undefined : int(5, 25);
      const maximum_allowance = byAmount ? incentive_amount! * num_qualifying : int(2, 10) * 500;
      const offer_construct = byAmount
        ? `Spend ${usd(min_spend)}, get ${usd(incentive_amount!)} back`
        : `Spend ${usd(min_spend)} or more, get ${incentive_percentage}% back (up to ${usd(maximum_allowance)})`;
      Object.assign(card, {
        fixed_fee: pick([0, 25, 50]),
        max_linkage,
        maximum_allowance,
        min_spend,
        num_qualifying,
        offer_construct,
        percent_fee: int(5, 15),
      });
      if (byAmount) card.incentive_amount = incentive_amount;
      else card.incentive_percentage = incentive_percentage;
      current_price = 0;
      value = maximum_allowance;
      cost = 0;
      quantity = max_linkage;
      title = `${offer_construct} at ${merchant_name}`;
    }

    const locations: DealLocation[] = Array.from({ length: int(1, 3) }, () => {
      const dLat = (rng() * 2 - 1) * 0.12; // about 8 miles
      const dLon = ((rng() * 2 - 1) * 0.12) / Math.cos((region.latitude * Math.PI) / 180);
      return {
        address: {
          street: `${int(100, 9899)} ${pick(STREETS)}`,
          locality: region.city,
          region: region.state,
          postal_code: pick(region.postal_codes),
          country: 'US' as const,
          latitude: Math.round((region.latitude + dLat) * 1e5) / 1e5,
          longitude: Math.round((region.longitude + dLon) * 1e5) / 1e5,
        },
        hours: pick(HOURS),
        phone: `(${AREA_CODES[region.id] ?? '555'}) 555-01${String(int(0, 99)).padStart(2, '0')}`,
      };
    });

    const redeem =
      method === 'shipped'
        ? 'Enter your shipping address at checkout. Orders ship within 5 business days.'
        : method === 'printed'
          ? 'Print your voucher and present it at the merchant. Appointment may be required.'
          : 'Show the redemption code on your phone at the merchant.';
    const max_per_user = int(1, 5);
    deals.push({
      id,
      title,
      type,
      state,
      category,
      subcategory,
      category_id,
      subcategory_id,
      campaign: `demo-${new Date(nowMin * MIN).getUTCFullYear()}-${slug(category)}`,
      affinity_score: Math.round(rng() * 50) / 10,
      current_price,
      value,
      cost,
      description1: `Enjoy ${item.toLowerCase()} from ${merchant_name}, one of ${region.name}'s most-loved ${subcategory.toLowerCase()} merchants.`,
      description2: `Part of our ${subcategory} collection in ${region.name}, ${region.state}.`,
      highlights: `${item}; ${subcategory} favourite in ${region.name}; ${usd(value)} value`,
      fine_print: `Limit ${max_per_user} per person. Not valid with other offers. Subject to availability.`,
      ...(method === 'printed'
        ? {
            fine_print_legalese:
              'Voucher has no cash value except as required by law. Promotional value expires as stated; paid value does not expire where prohibited by law.',
          }
        : {}),
      instructions: redeem,
      start_at: iso(start),
      end_at: iso(end),
      expires_at: iso(expires),
      ...(expiration_days !== undefined ? { expiration_days } : {}),
      fulfillment_method: method,
      shipping_address_required: method === 'shipped',
      image_url: `/images/deals/${id}.png`,
      locations,
      max_per_user,
      max_gift_per_user: int(0, 5),
      merchant_name,
      merchant_id: slug(`${merchant_name} ${region.id}`),
      region_id: region.id,
      supplier_id: pick(SUPPLIERS[type]),
      robotitle: `${item} at ${merchant_name} in ${region.name}`,
      tags: [slug(category), slug(subcategory), type, region.id],
      custom_data: rng() < 0.2 ? { featured: true, badge: pick(['Bestseller', 'New', 'Limited Time']) } : {},
      combine_linked_offers: null,
      quantity,
      ...card,
    });
  }
  return deals;
}
