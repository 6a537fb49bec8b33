import { isoInZone, isoUtc } from '@deals/wire';
import type { DealTerms } from '../domain/deal/deal-terms';
import type { DealDetails } from '../projections/deal-details/deal-details.projection';
import type { RegionView } from '../projections/regions/regions.projection';
import type { CatalogLinks } from '../queries/catalog-links';
import type { FieldSelection } from '../queries/v3-query';
import { answeredAddress, DealClockFacts } from './deal-v1.answers';

interface Source {
  deal: DealTerms;
  region: RegionView | null;
  facts: DealClockFacts;
  links: CatalogLinks;
}

const IMAGE_NAMES = ['large', 'medium', 'small', 'tiny'] as const;

function images({ deal, links }: Source): Record<string, string> {
  const relative = deal.image_url ?? `/images/deals/${deal.id}.jpg`;
  const slash = relative.lastIndexOf('/');
  return Object.fromEntries(
    IMAGE_NAMES.map((size) => [size, `${links.imageBaseUrl}${relative.slice(0, slash)}/${size}/${relative.slice(slash + 1)}`]),
  );
}

function locations({ deal }: Source) {
  return (deal.locations ?? []).map((l, i) => ({
    address: { address_id: l.address.address_id ?? `${deal.id}-${i + 1}`, ...answeredAddress(l.address) },
    hours: l.hours ?? '',
    phone: l.phone ?? '',
  }));
}

const text = (value: string | undefined) => value ?? '';
const cardLinked =
  (field: keyof DealTerms) =>
  ({ deal }: Source) =>
    deal.type === 'card-linked' ? (deal[field] ?? null) : undefined;

/**
 * Each attribute of the v3 deal, computed only when asked for. `undefined` means the
 * attribute does not apply to this deal (a card-linked term on a voucher deal, legal text on an
 * unprinted one): left out of a whole deal, null when asked for by name.
 */
const ATTRIBUTES: Record<string, (s: Source) => unknown> = {
  id: ({ deal }) => deal.id,
  campaign: ({ deal }) => text(deal.campaign),
  category: ({ deal }) => text(deal.category),
  category_id: ({ deal }) => (deal.category_id === undefined ? null : String(deal.category_id)),
  cost: ({ deal }) => deal.cost ?? null,
  description1: ({ deal }) => text(deal.description1),
  description2: ({ deal }) => text(deal.description2),
  end_at: ({ deal }) => isoUtc(deal.end_at),
  expiration_days: ({ deal }) => deal.expiration_days ?? null,
  expires_at: ({ deal, region }) => (deal.expires_at ? isoInZone(deal.expires_at, region?.region.time_zone ?? 'UTC') : null),
  fine_print: ({ deal }) => text(deal.fine_print),
  fine_print_legalese: ({ deal }) => (deal.fulfillment_method === 'printed' ? text(deal.fine_print_legalese) : undefined),
  fixed_fee: cardLinked('fixed_fee'),
  fulfillment_method: ({ deal }) => deal.fulfillment_method,
  highlights: ({ deal }) => text(deal.highlights),
  images,
  incentive_amount: cardLinked('incentive_amount'),
  incentive_percentage: cardLinked('incentive_percentage'),
  instructions: ({ deal }) => text(deal.instructions),
  locations,
  max_linkage: cardLinked('max_linkage'),
  max_per_user: ({ deal }) => deal.max_per_user ?? null,
  max_gift_per_user: ({ deal }) => deal.max_gift_per_user ?? null,
  maximum_allowance: cardLinked('maximum_allowance'),
  merchant_id: ({ deal }) => text(deal.merchant_id),
  merchant_name: ({ deal }) => text(deal.merchant_name),
  min_spend: cardLinked('min_spend'),
  num_left: ({ facts }) => facts.num_left,
  num_qualifying: cardLinked('num_qualifying'),
  number_sold: ({ facts }) => facts.number_sold,
  percent_fee: cardLinked('percent_fee'),
  purchase_url: ({ deal, links }) => `${links.siteBaseUrl}/deals/${deal.id}/purchase`,
  region_id: ({ deal }) => deal.region_id,
  region_name: ({ region }) => region?.region.name ?? '',
  robotitle: ({ deal }) => deal.robotitle ?? deal.title,
  shipping_address_required: ({ deal }) => deal.shipping_address_required ?? deal.fulfillment_method === 'shipped',
  show_url: ({ deal, links }) => `${links.siteBaseUrl}/deals/${deal.id}`,
  sold_out: ({ facts }) => facts.soldout,
  soldout: ({ facts }) => facts.soldout,
  start_at: ({ deal }) => isoUtc(deal.start_at),
  starting_price: ({ deal }) => deal.current_price,
  state: ({ facts }) => facts.state,
  subcategory: ({ deal }) => text(deal.subcategory),
  subcategory_id: ({ deal }) => (deal.subcategory_id === undefined ? null : String(deal.subcategory_id)),
  supplier_id: ({ deal }) => text(deal.supplier_id),
  tags: ({ deal }) => deal.tags ?? [],
  title: ({ deal }) => deal.title,
  type: ({ deal }) => deal.type,
  value: ({ deal }) => deal.value,
};

function pick(value: unknown, subs: string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => pick(item, subs));
  return Object.fromEntries(subs.map((s) => [s, (value as Record<string, unknown>)[s] ?? null]));
}

/**
 * The v3 deal with the attributes asked for, in the order asked (sub-fields picked from hashes and
 * from each item of lists); every attribute that applies when none were asked.
 */
export function toDealV3(
  view: DealDetails,
  region: RegionView | null,
  facts: DealClockFacts,
  links: CatalogLinks,
  selection: FieldSelection | null,
): Record<string, unknown> {
  const source: Source = { deal: view.deal!, region, facts, links };
  const body: Record<string, unknown> = {};
  if (!selection) {
    for (const [name, compute] of Object.entries(ATTRIBUTES)) {
      const value = compute(source);
      if (value !== undefined) body[name] = value;
    }
    return body;
  }
  for (const [name, subs] of selection) {
    const value = ATTRIBUTES[name](source) ?? null;
    body[name] = subs && value !== null ? pick(value, subs) : value;
  }
  return body;
}
