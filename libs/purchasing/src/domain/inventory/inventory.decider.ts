import { CannotFulfil, DomainCommand, SnapshotCodec, SnapshottedDecider, unknownCommand, ValidationFailed } from '@deals/kernel';
import { Map as ImmutableMap } from 'immutable';
import { ExpiryIndex, expiredHeld, fewer, Hold, withoutHold } from './inventory-holds';
import { holdExpiry, InventoryEvent, InventoryStocked, SandboxMark } from './inventory.events';
import { stockTotalIssues, unitCountIssue } from './unit-counts';

export type StockUnits = DomainCommand<'StockUnits', { dealId: string; total: number }>;
/**
 * The user the units are for (`buyerKey`), when known, and the deal's per-user limit
 * (`max_per_user`, from the catalogue's terms at the time of the command; none when absent). The
 * inventory counts each buyer's units, so the limit holds however many of the user's purchases
 * and claims arrive at once.
 */
export interface ForBuyer {
  buyer?: string;
  maxPerBuyer?: number;
}
/**
 * A sandbox's stocking of its own copy of a deal's inventory (see `partnerInventoryStream`): the
 * live deal's total, read by the caller. Its first hold stocks the copy, and a hold after the live
 * total changed stocks it again (never below the units it sold and holds), so that a restocked
 * deal is restocked in the sandbox too.
 */
export interface SandboxStock {
  total: number;
  sandbox: string;
}
/**
 * `offSale`: why the deal takes no new hold now (the catalogue's word, read by the caller), for a
 * hold that only a deal on sale may open (a sale's fresh units): refused with it unless the hold is
 * taken already, which is kept as it is.
 */
export type HoldUnits = DomainCommand<
  'HoldUnits',
  { dealId: string; holdId: string; quantity: number; stock?: SandboxStock; offSale?: string } & ForBuyer
>;
/** A claim names its buyer here: the hold of a reservation was taken before the user was known. */
export type SellHeldUnits = DomainCommand<'SellHeldUnits', { dealId: string; holdId: string } & ForBuyer>;
/**
 * `abandoned`: released at start because no purchase was recorded for it (its process stopped
 * between taking the hold and recording the purchase, which a reseller sale writes in that order
 * and a card purchase in the same commit). `refused`: given back at once because the purchase it
 * was taken for was refused (the user's earlier purchase was still being charged).
 */
export type ReleaseHold = DomainCommand<
  'ReleaseHold',
  { dealId: string; holdId: string; reason: 'released' | 'payment_failed' | 'abandoned' | 'refused' }
>;
export type ReleaseExpiredHold = DomainCommand<'ReleaseExpiredHold', { dealId: string; holdId: string }>;
export type InventoryCommand = StockUnits | HoldUnits | SellHeldUnits | ReleaseHold | ReleaseExpiredHold;

/** How a hold was closed: released, or sold (to its buyer, when one was known). */
export type ClosedHold = 'released' | 'sold' | { readonly soldTo: string };

/**
 * Units of one stocked deal. Open holds are kept until sold or released; an open hold past its
 * expiry no longer counts, whether or not its release job ever ran, so a lost job cannot lose
 * inventory. Deciding a hold costs the same with three open holds or thousands (reservations last
 * five minutes): the units held are summed as holds open and close, and the expired ones are found
 * by their expiry instant (one entry per second, not per hold).
 */
export interface StockedInventory {
  status: 'stocked';
  /** The sandbox whose copy of the deal's inventory this is (set by its stocking); none: the deal's own. */
  sandbox?: string;
  total: number;
  sold: number;
  holds: ImmutableMap<string, Hold>;
  /** Units in open holds, live or expired. */
  held: number;
  expiring: ExpiryIndex;
  /** Open holds of each buyer that has some (`buyerKey`), for the per-user limit. */
  buyerHolds: ImmutableMap<string, ImmutableMap<string, Hold>>;
  /**
   * Holds already sold or released, so that a repeated command changes nothing (a sale retried by
   * recovery long after must not sell again). It only grows, by one a sale: a persistent map, so
   * that each event adds one entry instead of copying them all (a hot deal's thousands). Kept as
   * keyed entries of the snapshots: a state resting on one holds only the holds closed since, and
   * those its commands named (looked up before they are decided).
   */
  closed: ImmutableMap<string, ClosedHold>;
  /** Units sold per buyer (`buyerKey`), for the per-user limit; sales with no known buyer are not in it. */
  bought: ImmutableMap<string, number>;
}

/** A deal's inventory: unstocked until its total is first set (it then has nothing to sell), or stocked. */
export type Inventory = { status: 'unstocked' } | StockedInventory;

/** A stocked deal's counts, holds and sales; an unstocked deal's are those of a deal stocked with none. */
export type InventoryUnits = Omit<StockedInventory, 'status' | 'sandbox'>;

const NO_UNITS: InventoryUnits = {
  total: 0,
  sold: 0,
  holds: ImmutableMap(),
  held: 0,
  expiring: ImmutableMap(),
  buyerHolds: ImmutableMap(),
  closed: ImmutableMap(),
  bought: ImmutableMap(),
};

export const unitsOf = (inventory: Inventory): InventoryUnits => (inventory.status === 'stocked' ? inventory : NO_UNITS);

/** The mark of the inventory's events: its sandbox, on a sandbox's copy; nothing on the deal's own. */
const marked = (inventory: Inventory): SandboxMark =>
  inventory.status === 'stocked' && inventory.sandbox !== undefined ? { sandbox: inventory.sandbox } : {};

/** Units in holds that are open and not expired at `now`. */
export const liveHeld = (inventory: Inventory, now: number) => {
  const { held, expiring } = unitsOf(inventory);
  return held - expiredHeld(expiring, now);
};

/** num_left: total − sold − live holds. */
export const unitsLeft = (inventory: Inventory, now: number) => {
  const { total, sold } = unitsOf(inventory);
  return Math.max(0, total - sold - liveHeld(inventory, now));
};

/** A refusal by the per-user limit (a fresh hold would be refused the same way, unlike a lapsed one). */
export class OverPerUserLimit extends CannotFulfil {}

/** A sale of a hold that lapsed or was released: fresh units may take its place. */
export class HoldLapsed extends CannotFulfil {
  constructor() {
    super('the reservation has expired or was released');
  }
}

/** What the per-user limit counts of `buyer` at `now`: units sold to them, and units in their live holds but `except`. */
export function buyerStanding(inventory: Inventory, buyer: string, now: number, except?: string): { bought: number; holding: number } {
  const units = unitsOf(inventory);
  const holds = units.buyerHolds.get(buyer);
  const holding = holds
    ? holds.reduce((sum, hold, holdId) => (hold.expiresAt > now && holdId !== except ? sum + hold.quantity : sum), 0)
    : 0;
  return { bought: units.bought.get(buyer) ?? 0, holding };
}

/** Refuses `quantity` more units for `buyer` beyond the limit: sold to them, and their live holds but `except`. */
function checkBuyerLimit(inventory: Inventory, { buyer, maxPerBuyer }: ForBuyer, quantity: number, now: number, except?: string): void {
  if (buyer === undefined || maxPerBuyer === undefined) return;
  const { bought, holding } = buyerStanding(inventory, buyer, now, except);
  if (bought + holding + quantity > maxPerBuyer) throw overPerUserLimit(maxPerBuyer, bought, holding);
}

/** The refusal of more units than a buyer's limit leaves them, in the inventory's words. */
export function overPerUserLimit(limit: number, bought: number, holding = 0): OverPerUserLimit {
  // eslint-disable-next-line no-restricted-syntax -- the deal's limit and the units the service counted
  return new OverPerUserLimit(`at most ${limit} per user; already bought ${bought}${holding ? ` and holding ${holding}` : ''}`);
}

/** The refusal of `quantity` units when `left` are left, in the inventory's words; null when there are enough. */
export function shortOfUnits(quantity: number, left: number): CannotFulfil | null {
  return quantity > left ? new CannotFulfil(left === 0 ? 'the deal is sold out' : `only ${left} units left`) : null;
}

/** The state with a hold opened. */
function open(inventory: StockedInventory, holdId: string, hold: Hold): StockedInventory {
  return {
    ...inventory,
    holds: inventory.holds.set(holdId, hold),
    held: inventory.held + hold.quantity,
    expiring: inventory.expiring.update(hold.expiresAt, 0, (units) => units + hold.quantity),
    buyerHolds:
      hold.buyer === undefined
        ? inventory.buyerHolds
        : inventory.buyerHolds.update(hold.buyer, ImmutableMap<string, Hold>(), (holds) => holds.set(holdId, hold)),
  };
}

/** The state with a hold closed (sold or released), or as it was when the hold is not open. */
function close(inventory: StockedInventory, holdId: string, as: ClosedHold): StockedInventory {
  const hold = inventory.holds.get(holdId);
  const closed = inventory.closed.set(holdId, as);
  if (!hold) return { ...inventory, closed };
  return {
    ...inventory,
    holds: inventory.holds.delete(holdId),
    held: inventory.held - hold.quantity,
    expiring: fewer(inventory.expiring, hold.expiresAt, hold.quantity),
    buyerHolds: hold.buyer === undefined ? inventory.buyerHolds : withoutHold(inventory.buyerHolds, hold.buyer, holdId),
    closed,
  };
}

const issue = (field: string, message: string) => new ValidationFailed([{ type: 'invalid', resource: 'purchase', field, message }]);

/** The state's body in a snapshot: what the rest is derived from (`closed` is kept by key). */
interface InventoryJson {
  stocked: boolean;
  sandbox?: string;
  total: number;
  sold: number;
  holds: Array<[string, Hold]>;
  bought: Array<[string, number]>;
}

/** The holds a command names (its decision reads whether they were closed). */
function holdsNamed(command: DomainCommand): string[] {
  const { holdId } = command.data as { holdId?: unknown };
  return typeof holdId === 'string' ? [holdId] : [];
}

/**
 * Snapshots of a deal's inventory, every 1,000 events (a hot deal's stream grows by two a sale):
 * counts, open holds and units bought per buyer; the units held, their expiry index and each
 * buyer's holds are derived from the open holds again. `closed` goes by hold id. An unstocked
 * deal's body is a stocked one's with nothing in it, marked unstocked.
 */
export const inventorySnapshots: SnapshotCodec<Inventory> = {
  shape: 'inventory/1',
  every: 1000,
  toJson: (inventory): InventoryJson => {
    const { total, sold, holds, bought } = unitsOf(inventory);
    const sandbox = marked(inventory);
    return { stocked: inventory.status === 'stocked', ...sandbox, total, sold, holds: [...holds.entries()], bought: [...bought.entries()] };
  },
  fromJson(json) {
    const { stocked, sandbox, total, sold, holds, bought } = json as InventoryJson;
    if (!stocked) return { status: 'unstocked' };
    let inventory: StockedInventory = { status: 'stocked', ...NO_UNITS, total, sold, bought: ImmutableMap(bought) };
    if (sandbox !== undefined) inventory = { ...inventory, sandbox };
    for (const [holdId, hold] of holds) inventory = open(inventory, holdId, hold);
    return inventory;
  },
  keyed: {
    keysOf: holdsNamed,
    // An open hold is not closed (a closed hold id is never opened again): a sale of it needs no look-up.
    has: (inventory, holdId) => unitsOf(inventory).closed.has(holdId) || unitsOf(inventory).holds.has(holdId),
    entries: (inventory) => [...unitsOf(inventory).closed.entries()],
    withEntries: (inventory, entries) =>
      inventory.status === 'stocked'
        ? { ...inventory, closed: inventory.closed.merge(entries as Iterable<[string, ClosedHold]>) }
        : inventory,
    withoutEntries: (inventory) => (inventory.status === 'stocked' ? { ...inventory, closed: ImmutableMap() } : inventory),
  },
};

export const inventoryDecider: SnapshottedDecider<Inventory, InventoryCommand, InventoryEvent> = {
  snapshot: inventorySnapshots,
  initialState: () => ({ status: 'unstocked' }),

  decide(command, inventory, now) {
    const t = now.getTime();
    const units = unitsOf(inventory);
    switch (command.type) {
      case 'StockUnits': {
        const { dealId, total } = command.data;
        const issues = stockTotalIssues(total);
        if (issues.length) throw new ValidationFailed(issues);
        // Units held (reservations, purchases being charged) are promised for their five minutes: a
        // total below them would sell past itself when they are claimed or paid.
        const held = liveHeld(inventory, t);
        if (total < units.sold + held) {
          const committed = held
            ? `${units.sold} units already sold and the ${held} held in open reservations and purchases`
            : `${units.sold} units already sold`;
          throw new ValidationFailed([
            // eslint-disable-next-line no-restricted-syntax -- the deal's limit and the units the service counted
            { type: 'invalid', resource: 'deal', field: 'quantity', message: `cannot be below the ${committed}` },
          ]);
        }
        if (inventory.status === 'stocked' && total === inventory.total) return [];
        return [{ type: 'InventoryStocked', data: { dealId, total, ...marked(inventory) } }];
      }
      case 'HoldUnits': {
        const { dealId, holdId, quantity, buyer, stock } = command.data;
        const stockIssues = stock ? stockTotalIssues(stock.total) : [];
        if (stockIssues.length) throw new ValidationFailed(stockIssues);
        const restocked = stock && Math.max(stock.total, units.sold + liveHeld(inventory, t));
        if (stock && restocked !== undefined && (inventory.status !== 'stocked' || restocked !== inventory.total)) {
          // A sandbox's copy, stocked with the live deal's total; the hold is decided on it.
          const stocked: InventoryStocked = { type: 'InventoryStocked', data: { dealId, total: restocked, sandbox: stock.sandbox } };
          const { stock: _used, ...hold } = command.data;
          return [stocked, ...inventoryDecider.decide({ type: 'HoldUnits', data: hold }, inventoryDecider.evolve(inventory, stocked), now)];
        }
        if (units.holds.has(holdId) || units.closed.has(holdId)) return [];
        if (command.data.offSale !== undefined) throw new CannotFulfil(command.data.offSale);
        const badCount = unitCountIssue(quantity, 'quantity');
        if (badCount) throw new ValidationFailed([badCount]);
        checkBuyerLimit(inventory, command.data, quantity, t);
        const short = shortOfUnits(quantity, unitsLeft(inventory, t));
        if (short) throw short;
        const expiresAt = new Date(holdExpiry(t)).toISOString();
        return [
          {
            type: 'UnitsHeld',
            data: { dealId, holdId, quantity, expiresAt, ...(buyer === undefined ? {} : { buyer }), ...marked(inventory) },
          },
        ];
      }
      case 'SellHeldUnits': {
        const { dealId, holdId } = command.data;
        const closed = units.closed.get(holdId);
        if (closed !== undefined && closed !== 'released') {
          // Sold already: the same sale again changes nothing; a claim by another user is refused.
          if (typeof closed === 'object' && command.data.buyer !== undefined && closed.soldTo !== command.data.buyer)
            throw issue('id', 'is already claimed by another user');
          return [];
        }
        const hold = units.holds.get(holdId);
        if (!hold || hold.expiresAt <= t) throw new HoldLapsed();
        // A hold taken for a known buyer was counted when it was taken; a claimed one is counted now.
        if (hold.buyer === undefined) checkBuyerLimit(inventory, command.data, hold.quantity, t, holdId);
        const buyer = hold.buyer ?? command.data.buyer;
        const { quantity } = hold;
        const expiresAt = new Date(hold.expiresAt).toISOString();
        return [
          {
            type: 'UnitsSold',
            data: { dealId, holdId, quantity, expiresAt, ...(buyer === undefined ? {} : { buyer }), ...marked(inventory) },
          },
        ];
      }
      case 'ReleaseHold': {
        const { dealId, holdId, reason } = command.data;
        const hold = units.holds.get(holdId);
        // A partner's release of units a claim has sold meanwhile: the units are not returned.
        if (!hold && reason === 'released' && units.closed.has(holdId) && units.closed.get(holdId) !== 'released')
          throw issue('id', 'is being claimed: its units are sold');
        if (!hold) return [];
        const expiresAt = new Date(hold.expiresAt).toISOString();
        return [{ type: 'UnitsReleased', data: { dealId, holdId, quantity: hold.quantity, expiresAt, reason, ...marked(inventory) } }];
      }
      case 'ReleaseExpiredHold': {
        const { dealId, holdId } = command.data;
        const hold = units.holds.get(holdId);
        if (!hold || hold.expiresAt > t) return [];
        const expiresAt = new Date(hold.expiresAt).toISOString();
        return [
          { type: 'UnitsReleased', data: { dealId, holdId, quantity: hold.quantity, expiresAt, reason: 'expired', ...marked(inventory) } },
        ];
      }
      default:
        return unknownCommand(command);
    }
  },

  evolve(inventory, event) {
    if (event.type === 'InventoryStocked') {
      const { total, sandbox } = event.data;
      const stocked: StockedInventory = inventory.status === 'stocked' ? inventory : { status: 'stocked', ...NO_UNITS };
      return sandbox === undefined ? { ...stocked, total } : { ...stocked, total, sandbox };
    }
    // A hold needs units left, so none comes to a deal before it is stocked.
    if (inventory.status === 'unstocked') return inventory;
    switch (event.type) {
      case 'UnitsHeld': {
        const { holdId, quantity, expiresAt, buyer } = event.data;
        const hold = { quantity, expiresAt: Date.parse(expiresAt) };
        return open(inventory, holdId, buyer === undefined ? hold : { ...hold, buyer });
      }
      case 'UnitsSold': {
        const { holdId, quantity } = event.data;
        const buyer = event.data.buyer ?? inventory.holds.get(holdId)?.buyer;
        const after = close(inventory, holdId, buyer === undefined ? 'sold' : { soldTo: buyer });
        return {
          ...after,
          sold: inventory.sold + quantity,
          bought: buyer === undefined ? inventory.bought : inventory.bought.update(buyer, 0, (n) => n + quantity),
        };
      }
      case 'UnitsReleased':
        return close(inventory, event.data.holdId, 'released');
      default: {
        const unhandled: never = event;
        return unhandled;
      }
    }
  },
};
