import { defineProjection, geoPoint, RecordedEvent, ViewDocument } from '@deals/kernel';
import type { DealTerms, WorkflowState } from '../../domain/deal/deal-terms';
import type { DealEvent } from '../../domain/deal/deal.events';

/**
 * Inventory events as the catalogue reads them (the purchasing context owns and appends them).
 * Declared here so the catalogue depends on the published event, not on purchasing's code.
 */
type InventoryStocked = { type: 'InventoryStocked'; data: { dealId: string; total: number } };
type UnitsHeld = { type: 'UnitsHeld'; data: { dealId: string; holdId: string; quantity: number; expiresAt: string } };
type UnitsSold = { type: 'UnitsSold'; data: { dealId: string; holdId: string; quantity: number } };
type UnitsReleased = { type: 'UnitsReleased'; data: { dealId: string; holdId: string; quantity: number } };
type InventoryEvent = InventoryStocked | UnitsHeld | UnitsSold | UnitsReleased;

/** Units of a deal as the view keeps them; open holds count only until they expire (read time). */
export interface DealInventory {
  total: number;
  sold: number;
  holds: Record<string, { quantity: number; expiresAt: number }>;
}

type Point = { type: 'Point'; coordinates: [number, number] };

/**
 * Flat copies of what discovery filters and sorts on, so both view stores answer with indexes:
 * lower-cased keys for case-insensitive equality, epoch milliseconds for instants, GeoJSON points
 * (longitude first) of the deal's locations.
 */
export interface DealSearchFields {
  regionId: string | null;
  type: string | null;
  categoryKey: string | null;
  subcategoryKey: string | null;
  title: string | null;
  merchantName: string | null;
  price: number | null;
  value: number | null;
  startAt: number | null;
  endAt: number | null;
  numLeft: number;
  numberSold: number;
  soldOut: boolean;
  supplierId: string | null;
  vendorId: string | null;
  marketplaceSlug: string | null;
  tags: string[];
  locs: Point[];
}

/** "What is deal X now?", and "which deals match?": terms, workflow state, inventory, search fields. */
export interface DealDetails extends ViewDocument, DealSearchFields {
  /** Null only while inventory has been stocked for a deal the view has not seen listed yet. */
  deal: DealTerms | null;
  state: WorkflowState;
  inventory: DealInventory;
}

export const DEAL_DETAILS = 'deal_details_v2';

type Handled = DealEvent | InventoryEvent;

const dealIdOf = (event: Handled) => (event.type === 'DealListed' ? event.data.deal.id : event.data.dealId);
const lower = (text: string | undefined) => (typeof text === 'string' ? text.trim().toLowerCase() : null);
const instant = (iso: string | undefined) => (iso ? Date.parse(iso) : null);

/** Units neither sold nor in an open hold (holds that have expired are counted out at read time). */
export const unitsLeftAt = (inventory: DealInventory, now: number) =>
  Math.max(0, inventory.total - inventory.sold - Object.values(inventory.holds ?? {}).reduce((n, h) => (h.expiresAt > now ? n + h.quantity : n), 0));

/**
 * `numLeft`/`soldOut` count every open hold; a lapsed hold stops counting here when its release
 * job (or any later event of the deal) comes, and at once in answers computed at read time.
 */
export function searchFields(deal: DealTerms | null, inventory: DealInventory): DealSearchFields {
  const numLeft = unitsLeftAt(inventory, Number.NEGATIVE_INFINITY);
  return {
    regionId: deal?.region_id ?? null,
    type: deal?.type ?? null,
    categoryKey: lower(deal?.category),
    subcategoryKey: lower(deal?.subcategory),
    title: deal?.title ?? null,
    merchantName: deal?.merchant_name ?? null,
    price: deal?.current_price ?? null,
    value: deal?.value ?? null,
    startAt: instant(deal?.start_at),
    endAt: instant(deal?.end_at),
    numLeft,
    numberSold: inventory.sold,
    soldOut: numLeft === 0,
    supplierId: deal?.supplier_id ?? null,
    vendorId: deal?.vendor_id ?? null,
    marketplaceSlug: deal?.marketplace_slug ?? null,
    tags: deal?.tags ?? [],
    locs: (deal?.locations ?? []).map((l) => geoPoint(l.address?.latitude, l.address?.longitude)).filter((p): p is Point => p !== null),
  };
}

/** The inventory after a run of its events, the open holds copied once (a hot deal has dozens). */
function foldInventory(inventory: DealInventory, events: readonly InventoryEvent[]): DealInventory {
  const holds = copyHolds(inventory.holds);
  let { total, sold } = inventory;
  for (const event of events) {
    if (event.type === 'InventoryStocked') total = event.data.total;
    else if (event.type === 'UnitsHeld') holds[event.data.holdId] = { quantity: event.data.quantity, expiresAt: Date.parse(event.data.expiresAt) };
    else {
      delete holds[event.data.holdId];
      if (event.type === 'UnitsSold') sold += event.data.quantity;
    }
  }
  return { ...inventory, total, sold, holds };
}

/** A copy of `holds` by a plain loop: spreading an object of many keys takes V8's slow path, four times slower. */
function copyHolds(holds: DealInventory['holds']): DealInventory['holds'] {
  const copy: DealInventory['holds'] = {};
  for (const id in holds) copy[id] = holds[id];
  return copy;
}

const isInventoryEvent = (event: Handled): event is InventoryEvent =>
  event.type === 'InventoryStocked' || event.type === 'UnitsHeld' || event.type === 'UnitsSold' || event.type === 'UnitsReleased';

function next(current: DealDetails, event: Handled): Pick<DealDetails, 'deal' | 'state' | 'inventory'> {
  if (isInventoryEvent(event)) return { ...current, inventory: foldInventory(current.inventory, [event]) };
  switch (event.type) {
    case 'DealListed':
      return { ...current, deal: event.data.deal, state: event.data.state };
    case 'DealRevised': {
      const deal = { ...current.deal, ...event.data.changes } as Record<string, unknown>;
      for (const key of event.data.removed) delete deal[key];
      return { ...current, deal: deal as unknown as DealTerms };
    }
    case 'DealStateChanged':
      return { ...current, state: event.data.to };
  }
}

/** A known deal after inventory events: only the inventory and its figures change (a hot deal takes hundreds a second). */
function withInventory(view: DealDetails, events: readonly InventoryEvent[], position: string): DealDetails {
  const inventory = foldInventory(view.inventory, events);
  const numLeft = unitsLeftAt(inventory, Number.NEGATIVE_INFINITY);
  return { ...view, _pos: position, inventory, numLeft, numberSold: inventory.sold, soldOut: numLeft === 0 };
}

export const dealDetailsProjection = defineProjection<DealDetails>({
  name: DEAL_DETAILS,
  handles: ['DealListed', 'DealRevised', 'DealStateChanged', 'InventoryStocked', 'UnitsHeld', 'UnitsSold', 'UnitsReleased'],
  indexes: [
    { keys: { regionId: 1 } },
    { keys: { state: 1 } },
    { keys: { type: 1 } },
    { keys: { categoryKey: 1 } },
    { keys: { subcategoryKey: 1 } },
    { keys: { price: 1 } },
    { keys: { startAt: 1 } },
    { keys: { endAt: 1 } },
    { keys: { soldOut: 1 } },
    { keys: { title: 1 } },
    { keys: { value: 1 } },
    { keys: { numLeft: 1 } },
    { keys: { numberSold: 1 } },
    { keys: { merchantName: 1 } },
    { keys: { locs: '2dsphere' } },
  ],
  documentIds: (event: RecordedEvent) => [dealIdOf(event as unknown as Handled)],
  evolve(view, recorded, id) {
    const current: DealDetails = view ?? {
      _id: id, _pos: recorded.position, deal: null, state: 'submitted', inventory: { total: 0, sold: 0, holds: {} }, ...searchFields(null, { total: 0, sold: 0, holds: {} }),
    };
    const event = recorded as unknown as Handled;
    if (view && isInventoryEvent(event)) return withInventory(view, [event], recorded.position);
    const { deal, state, inventory } = next(current, event);
    return { _id: id, _pos: recorded.position, deal, state, inventory, ...searchFields(deal, inventory) };
  },
  evolveRun(view, events, id) {
    if (!view || !events.every((e) => isInventoryEvent(e as unknown as Handled))) {
      let doc = view;
      for (const event of events) doc = dealDetailsProjection.evolve(doc, event, id) ?? doc;
      return doc;
    }
    // A hot deal's run of holds, sales and releases: the open holds copied once, not once per event.
    return withInventory(view, events as unknown as InventoryEvent[], events[events.length - 1].position);
  },
});
