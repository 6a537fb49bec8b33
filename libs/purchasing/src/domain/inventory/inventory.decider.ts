import { CannotFulfil, Decider, DomainCommand, ValidationFailed } from '@deals/kernel';
import { Map as ImmutableMap } from 'immutable';
import { HOLD_TTL_MS, InventoryEvent } from './inventory.events';

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
export type HoldUnits = DomainCommand<'HoldUnits', { dealId: string; holdId: string; quantity: number } & ForBuyer>;
/** A claim names its buyer here: the hold of a reservation was taken before the user was known. */
export type SellHeldUnits = DomainCommand<'SellHeldUnits', { dealId: string; holdId: string } & ForBuyer>;
/**
 * `abandoned`: released at start because no purchase was recorded for it (its process stopped
 * between taking the hold and recording the purchase: a reseller sale writes them in that order).
 */
export type ReleaseHold = DomainCommand<'ReleaseHold', { dealId: string; holdId: string; reason: 'released' | 'payment_failed' | 'abandoned' }>;
export type ReleaseExpiredHold = DomainCommand<'ReleaseExpiredHold', { dealId: string; holdId: string }>;
export type InventoryCommand = StockUnits | HoldUnits | SellHeldUnits | ReleaseHold | ReleaseExpiredHold;

export interface Hold {
  quantity: number;
  expiresAt: number;
  buyer?: string;
}

/**
 * Units of one deal. Open holds are kept until sold or released; an open hold past its expiry no
 * longer counts, whether or not its release job ever ran, so a lost job cannot lose inventory.
 */
export interface Inventory {
  stocked: boolean;
  total: number;
  sold: number;
  holds: ImmutableMap<string, Hold>;
  /**
   * Holds already sold or released, so that a repeated command changes nothing (a sale retried by
   * recovery long after must not sell again). It only grows, by one a sale: a persistent map, so
   * that each event adds one entry instead of copying them all (a hot deal's thousands).
   */
  closed: ImmutableMap<string, 'sold' | 'released'>;
  /** Units sold per buyer (`buyerKey`), for the per-user limit; sales with no known buyer are not in it. */
  bought: ImmutableMap<string, number>;
}

export const liveHeld = (inventory: Inventory, now: number) =>
  inventory.holds.reduce((sum, hold) => (hold.expiresAt > now ? sum + hold.quantity : sum), 0);

/** num_left: total − sold − live holds. */
export const unitsLeft = (inventory: Inventory, now: number) => Math.max(0, inventory.total - inventory.sold - liveHeld(inventory, now));

/** A refusal by the per-user limit (a fresh hold would be refused the same way, unlike a lapsed one). */
export class OverPerUserLimit extends CannotFulfil {}

/** Refuses `quantity` more units for `buyer` beyond the limit: sold to them, and their live holds but `except`. */
function checkBuyerLimit(inventory: Inventory, { buyer, maxPerBuyer }: ForBuyer, quantity: number, now: number, except?: string): void {
  if (buyer === undefined || maxPerBuyer === undefined) return;
  const bought = inventory.bought.get(buyer) ?? 0;
  const holding = inventory.holds.reduce((sum, hold, holdId) => (hold.buyer === buyer && hold.expiresAt > now && holdId !== except ? sum + hold.quantity : sum), 0);
  if (bought + holding + quantity > maxPerBuyer) {
    throw new OverPerUserLimit(`at most ${maxPerBuyer} per user; already bought ${bought}${holding ? ` and holding ${holding}` : ''}`);
  }
}

const issue = (field: string, message: string) => new ValidationFailed([{ type: 'invalid', resource: 'purchase', field, message }]);

export const inventoryDecider: Decider<Inventory, InventoryCommand, InventoryEvent> = {
  initialState: () => ({ stocked: false, total: 0, sold: 0, holds: ImmutableMap(), closed: ImmutableMap(), bought: ImmutableMap() }),

  decide(command, inventory, now) {
    const t = now.getTime();
    switch (command.type) {
      case 'StockUnits': {
        const { dealId, total } = command.data;
        if (!Number.isSafeInteger(total) || total < 0) {
          throw new ValidationFailed([{ type: 'invalid', resource: 'deal', field: 'quantity', message: 'must be a whole number, not negative' }]);
        }
        if (total < inventory.sold) {
          throw new ValidationFailed([{ type: 'invalid', resource: 'deal', field: 'quantity', message: `cannot be below the ${inventory.sold} units already sold` }]);
        }
        if (inventory.stocked && total === inventory.total) return [];
        return [{ type: 'InventoryStocked', data: { dealId, total } }];
      }
      case 'HoldUnits': {
        const { dealId, holdId, quantity, buyer } = command.data;
        if (inventory.holds.has(holdId) || inventory.closed.has(holdId)) return [];
        if (!Number.isSafeInteger(quantity) || quantity < 1) throw issue('quantity', 'must be a whole number from 1');
        checkBuyerLimit(inventory, command.data, quantity, t);
        const left = unitsLeft(inventory, t);
        if (quantity > left) throw new CannotFulfil(left === 0 ? 'the deal is sold out' : `only ${left} units left`);
        return [{ type: 'UnitsHeld', data: { dealId, holdId, quantity, expiresAt: new Date(t + HOLD_TTL_MS).toISOString(), ...(buyer === undefined ? {} : { buyer }) } }];
      }
      case 'SellHeldUnits': {
        const { dealId, holdId } = command.data;
        if (inventory.closed.get(holdId) === 'sold') return [];
        const hold = inventory.holds.get(holdId);
        if (!hold || hold.expiresAt <= t) throw new CannotFulfil('the reservation has expired or was released');
        // A hold taken for a known buyer was counted when it was taken; a claimed one is counted now.
        if (hold.buyer === undefined) checkBuyerLimit(inventory, command.data, hold.quantity, t, holdId);
        const buyer = hold.buyer ?? command.data.buyer;
        return [{ type: 'UnitsSold', data: { dealId, holdId, quantity: hold.quantity, ...(buyer === undefined ? {} : { buyer }) } }];
      }
      case 'ReleaseHold': {
        const { dealId, holdId, reason } = command.data;
        const hold = inventory.holds.get(holdId);
        if (!hold) return [];
        return [{ type: 'UnitsReleased', data: { dealId, holdId, quantity: hold.quantity, reason } }];
      }
      case 'ReleaseExpiredHold': {
        const { dealId, holdId } = command.data;
        const hold = inventory.holds.get(holdId);
        if (!hold || hold.expiresAt > t) return [];
        return [{ type: 'UnitsReleased', data: { dealId, holdId, quantity: hold.quantity, reason: 'expired' } }];
      }
    }
  },

  evolve(inventory, event) {
    switch (event.type) {
      case 'InventoryStocked':
        return { ...inventory, stocked: true, total: event.data.total };
      case 'UnitsHeld': {
        const { holdId, quantity, expiresAt, buyer } = event.data;
        return { ...inventory, holds: inventory.holds.set(holdId, buyer === undefined ? { quantity, expiresAt: Date.parse(expiresAt) } : { quantity, expiresAt: Date.parse(expiresAt), buyer }) };
      }
      case 'UnitsSold': {
        const { holdId, quantity } = event.data;
        const buyer = event.data.buyer ?? inventory.holds.get(holdId)?.buyer;
        return {
          ...inventory,
          sold: inventory.sold + quantity,
          holds: inventory.holds.delete(holdId),
          closed: inventory.closed.set(holdId, 'sold'),
          bought: buyer === undefined ? inventory.bought : inventory.bought.update(buyer, 0, (n) => n + quantity),
        };
      }
      case 'UnitsReleased':
        return { ...inventory, holds: inventory.holds.delete(event.data.holdId), closed: inventory.closed.set(event.data.holdId, 'released') };
    }
  },
};
