import { isoInZone, isoUtc } from '@deals/wire';
import type { DealLocation, DealTerms, WorkflowState } from '../domain/deal/deal-terms';
import { effectiveStateAt } from '../domain/deal/deal-workflow';
import { DealDetails, unitsLeftAt } from '../projections/deal-details/deal-details.projection';
import type { RegionView } from '../projections/regions/regions.projection';
import type { CatalogLinks } from '../queries/catalog-links';

/** Image sizes of `primary_image` with their dimensions, width x height. */
export const IMAGE_SIZES: Record<string, string> = {
  _103: '103x62',
  _135: '135x81',
  _180: '180x108',
  _198: '198x119',
  _222: '222x133',
  _300: '300x180',
  _306: '306x184',
  _316: '316x190',
  _372: '372x223',
  _400: '400x240',
  _498: '498x299',
  _640: '640x384',
  _660: '660x396',
  featured: '600x360',
  large: '800x480',
  medium: '440x264',
  show: '700x420',
  thumb: '80x48',
  tiny: '40x24',
  xlarge: '1280x768',
};

const CARD_LINKED_ONLY = [
  'fixed_fee',
  'incentive_amount',
  'incentive_percentage',
  'max_linkage',
  'maximum_allowance',
  'min_spend',
  'num_qualifying',
  'offer_construct',
  'percent_fee',
] as const;

/**
 * What the clock changes in a deal's answer: its effective state, whether it ended, and the live
 * inventory figures (holds lapse with time).
 */
export interface DealClockFacts {
  state: WorkflowState;
  ended: boolean;
  num_left: number;
  number_sold: number;
  soldout: boolean;
  purchasable_number: number;
}

export function dealClockFacts(view: DealDetails, now: Date): DealClockFacts {
  const deal = view.deal!;
  const state = effectiveStateAt(view.state, view.startAt!, view.endAt!, now.getTime());
  const numLeft = unitsLeftAt(view.inventory, now.getTime());
  const perUser = deal.max_per_user ?? numLeft;
  return {
    state,
    ended: state === 'landed' || state === 'cancelled' || state === 'deleted' || view.endAt! <= now.getTime(),
    num_left: numLeft,
    number_sold: view.inventory.sold,
    soldout: numLeft === 0,
    // Nothing is purchasable once the vouchers have expired (every purchase is refused then).
    purchasable_number:
      state === 'in-flight' && !(typeof deal.expires_at === 'string' && Date.parse(deal.expires_at) <= now.getTime())
        ? Math.min(perUser, numLeft)
        : 0,
  };
}

/** A location's address as the v1 and v3 deals answer it: every field, empty text or null where the terms have none. */
export const answeredAddress = (address: DealLocation['address']) => ({
  region: address.region ?? '',
  postal_code: address.postal_code ?? '',
  street: address.street ?? '',
  latitude: address.latitude ?? null,
  locality: address.locality ?? '',
  longitude: address.longitude ?? null,
  country: address.country ?? '',
});

function imageUrls(deal: DealTerms, links: CatalogLinks) {
  const relative = deal.image_url ?? `/images/deals/${deal.id}.jpg`;
  const slash = relative.lastIndexOf('/');
  const folder = relative.slice(0, slash);
  const file = relative.slice(slash + 1);
  const primary: Record<string, { size: string; dimensions: string; url: string }> = {};
  for (const [size, dimensions] of Object.entries(IMAGE_SIZES)) {
    primary[size] = { size, dimensions, url: `${links.imageBaseUrl}${folder}/${size}/${file}` };
  }
  return { image_url: relative, image_url_abs: `${links.imageBaseUrl}${relative}`, primary_image: primary };
}

/** The v1 deal: every field, deprecated aliases carrying their replacements' values. */
export function toDealV1(
  view: DealDetails,
  region: RegionView | null,
  facts: DealClockFacts,
  links: CatalogLinks,
): Record<string, unknown> {
  const deal = view.deal!;
  const zone = region?.region.time_zone ?? 'UTC';
  const { state, ended, ...figures } = facts;
  const images = imageUrls(deal, links);
  const body: Record<string, unknown> = {
    id: deal.id,
    slug: deal.id,
    deal_id: deal.id,
    affinity_score: deal.affinity_score ?? 0,
    campaign: deal.campaign ?? '',
    category: deal.category ?? '',
    subcategory: deal.subcategory ?? '',
    category_id: deal.category_id ?? null,
    subcategory_id: deal.subcategory_id ?? null,
    combine_linked_offers: deal.combine_linked_offers ?? null,
    custom_data: deal.custom_data ?? {},
    current_price: deal.current_price,
    description1: deal.description1 ?? '',
    description2: deal.description2 ?? '',
    end_at: isoUtc(deal.end_at),
    ended,
    expires_at: deal.expires_at ? isoInZone(deal.expires_at, zone) : null,
    fine_print: deal.fine_print ?? '',
    ...(deal.fulfillment_method === 'printed' ? { fine_print_legalese: deal.fine_print_legalese ?? '' } : {}),
    fulfillment_method: deal.fulfillment_method,
    highlights: deal.highlights ?? '',
    image_url: images.image_url,
    image_url_abs: images.image_url_abs,
    instructions: deal.instructions ?? '',
    locations: (deal.locations ?? []).map((l) => ({ address: answeredAddress(l.address), hours: l.hours ?? '', phone: l.phone ?? '' })),
    low_down: deal.description1 ?? '',
    max_per_user: deal.max_per_user ?? null,
    max_gift_per_user: deal.max_gift_per_user ?? null,
    merchant_name: deal.merchant_name ?? '',
    ...figures,
    primary_image: images.primary_image,
    purchase_url: `${links.siteBaseUrl}/deals/${deal.id}/purchase`,
    region_id: deal.region_id,
    region_name: region?.region.name ?? '',
    region_slug: deal.region_id,
    robotitle: deal.robotitle ?? deal.title,
    shipping_address_required: deal.shipping_address_required ?? deal.fulfillment_method === 'shipped',
    show_url: `${links.siteBaseUrl}/deals/${deal.id}`,
    situation: deal.description2 ?? '',
    start_at: isoUtc(deal.start_at),
    starting_price: deal.current_price,
    state,
    supplier_id: deal.supplier_id ?? '',
    supplier_slug: deal.supplier_id ?? '',
    tags: deal.tags ?? [],
    title: deal.title,
    type: deal.type,
    value: deal.value,
  };
  if (deal.type === 'card-linked') for (const field of CARD_LINKED_ONLY) body[field] = deal[field] ?? null;
  return body;
}
