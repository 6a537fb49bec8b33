import { defineProjection, geoPoint, RecordedEvent, ViewDocument } from '@deals/kernel';
import type { DealTerms, WorkflowState } from '../../domain/deal/deal-terms';
import type { DealEvent } from '../../domain/deal/deal.events';

/**
 * Inventory events as the catalogue reads them (the purchasing context owns and appends them).
 * Declared here so the catalogue depends on the published event, not on purchasing's code.
 */
type InventoryStocked = { type: 'InventoryStocked'; data: { dealId: string; total: number } };
type UnitsHeld = { type: 'UnitsHeld'; data: { dealId: string; holdId: string; quantity: number; expiresAt: string } };
/** `expiresAt`: the hold's (absent from events written before it was added). */
type UnitsSold = { type: 'UnitsSold'; data: { dealId: string; holdId: string; quantity: number; expiresAt?: string } };
type UnitsReleased = { type: 'UnitsReleased'; data: { dealId: string; holdId: string; quantity: number; expiresAt?: string } };
type InventoryEvent = InventoryStocked | UnitsHeld | UnitsSold | UnitsReleased;

/**
 * Whether an event is of a sandbox's own inventory of the deal (purchasing marks each with the
 * sandbox): test purchases never move the live deal's figures, so the view leaves them out.
 */
const ofSandbox = (event: RecordedEvent) => (event.data as { sandbox?: unknown }).sandbox !== undefined;

/**
 * Units of a deal as the view keeps them. Open holds are not kept one by one (a deal may have
 * thousands of five-minute reservations open, and the document is rewritten at every sale): their
 * units are summed by the second they expire at, `held[expiresAt / 1 s]`, so the document has at
 * most a few hundred such entries however many holds are open. Holds expire on whole seconds (the
 * inventory rounds their five minutes up to one), so this counts exactly what the inventory counts;
 * an expiry that is not a whole second (events from before) counts until the end of its second,
 * erring towards fewer units left, never more. Sales and releases name their hold's expiry (those
 * from before do not: their holds are kept one by one in `uneven`, until closed).
 */
export interface DealInventory {
  total: number;
  sold: number;
  held: Record<string, number>;
  /**
   * Open holds whose expiry is not a whole second (written before holds were rounded, whose sales
   * and releases do not name the expiry), one by one: `[held key, quantity]` by hold id.
   */
  uneven?: Record<string, [string, number]>;
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

export const DEAL_DETAILS = 'deal_details_v3';

type Handled = DealEvent | InventoryEvent;

const dealIdOf = (event: Handled) => (event.type === 'DealListed' ? event.data.deal.id : event.data.dealId);
const lower = (text: string | undefined) => (typeof text === 'string' ? text.trim().toLowerCase() : null);
const instant = (iso: string | undefined) => (iso ? Date.parse(iso) : null);

/** Units neither sold nor in an open hold at `now` (holds that have expired are counted out at read time). */
export function unitsLeftAt(inventory: DealInventory, now: number): number {
  let held = 0;
  for (const second in inventory.held) if (Number(second) * 1000 > now) held += inventory.held[second];
  return Math.max(0, inventory.total - inventory.sold - held);
}

const heldKey = (expiresAt: string) => String(Math.ceil(Date.parse(expiresAt) / 1000));

/**
 * `numLeft`/`soldOut` count the holds open and unexpired when the deal's latest event happened
 * (`asOf`); a lapsed hold stops counting here at the deal's next event (its release job's, at the
 * latest), and at once in answers computed at read time.
 */
export function searchFields(deal: DealTerms | null, inventory: DealInventory, asOf: number): DealSearchFields {
  const numLeft = unitsLeftAt(inventory, asOf);
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

/** The inventory after a run of its events, the held units copied once. */
function foldInventory(inventory: DealInventory, events: readonly InventoryEvent[]): DealInventory {
  const held = { ...inventory.held };
  let uneven = inventory.uneven;
  let { total, sold } = inventory;
  const take = (key: string, quantity: number) => {
    const left = (held[key] ?? 0) - quantity;
    if (left > 0) held[key] = left;
    else delete held[key];
  };
  for (const event of events) {
    if (event.type === 'InventoryStocked') total = event.data.total;
    else if (event.type === 'UnitsHeld') {
      const key = heldKey(event.data.expiresAt);
      held[key] = (held[key] ?? 0) + event.data.quantity;
      if (Date.parse(event.data.expiresAt) % 1000 !== 0) uneven = { ...uneven, [event.data.holdId]: [key, event.data.quantity] };
    } else {
      if (event.type === 'UnitsSold') sold += event.data.quantity;
      const one = uneven?.[event.data.holdId];
      if (one) {
        take(one[0], one[1]);
        const { [event.data.holdId]: _closed, ...rest } = uneven!;
        uneven = Object.keys(rest).length ? rest : undefined;
      } else if (event.data.expiresAt !== undefined) take(heldKey(event.data.expiresAt), event.data.quantity);
    }
  }
  return uneven ? { ...inventory, total, sold, held, uneven } : { total, sold, held };
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
function withInventory(view: DealDetails, events: readonly InventoryEvent[], position: string, asOf: number): DealDetails {
  const inventory = foldInventory(view.inventory, events);
  const numLeft = unitsLeftAt(inventory, asOf);
  return { ...view, _pos: position, inventory, numLeft, numberSold: inventory.sold, soldOut: numLeft === 0 };
}

/** When the event happened (its metadata's `occurredAt`); the search fields count the holds live then. */
const occurredAt = (event: RecordedEvent) => Date.parse(event.metadata.occurredAt);

export const dealDetailsProjection = defineProjection<DealDetails>({
  name: DEAL_DETAILS,
  handles: ['DealListed', 'DealRevised', 'DealStateChanged', 'InventoryStocked', 'UnitsHeld', 'UnitsSold', 'UnitsReleased'],
  // Every list reads it, with filters and sorts of every kind: held in memory by the embedded store.
  keepInMemory: true,
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
  documentIds: (event: RecordedEvent) => (ofSandbox(event) ? [] : [dealIdOf(event as unknown as Handled)]),
  evolve(view, recorded, id) {
    const asOf = occurredAt(recorded);
    const current: DealDetails = view ?? {
      _id: id,
      _pos: recorded.position,
      deal: null,
      state: 'submitted',
      inventory: { total: 0, sold: 0, held: {} },
      ...searchFields(null, { total: 0, sold: 0, held: {} }, asOf),
    };
    const event = recorded as unknown as Handled;
    if (view && isInventoryEvent(event)) return withInventory(view, [event], recorded.position, asOf);
    const { deal, state, inventory } = next(current, event);
    return { _id: id, _pos: recorded.position, deal, state, inventory, ...searchFields(deal, inventory, asOf) };
  },
  evolveRun(view, events, id) {
    if (!view || !events.every((e) => isInventoryEvent(e as unknown as Handled))) {
      let doc = view;
      for (const event of events) doc = dealDetailsProjection.evolve(doc, event, id) ?? doc;
      return doc;
    }
    // A hot deal's run of holds, sales and releases: the held units copied once, not once per event.
    const last = events[events.length - 1];
    return withInventory(view, events as unknown as InventoryEvent[], last.position, occurredAt(last));
  },
});
