import { CannotFulfil, Decider, DomainCommand, ValidationFailed } from '@deals/kernel';
import { Map as ImmutableMap } from 'immutable';
import { HOLD_TTL_MS, InventoryEvent } from './inventory.events';

export type StockUnits = DomainCommand<'StockUnits', { dealId: string; total: number }>;
export type HoldUnits = DomainCommand<'HoldUnits', { dealId: string; holdId: string; quantity: number }>;
export type SellHeldUnits = DomainCommand<'SellHeldUnits', { dealId: string; holdId: string }>;
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
}

export const liveHeld = (inventory: Inventory, now: number) =>
  inventory.holds.reduce((sum, hold) => (hold.expiresAt > now ? sum + hold.quantity : sum), 0);

/** num_left: total − sold − live holds. */
export const unitsLeft = (inventory: Inventory, now: number) => Math.max(0, inventory.total - inventory.sold - liveHeld(inventory, now));

const issue = (field: string, message: string) => new ValidationFailed([{ type: 'invalid', resource: 'purchase', field, message }]);

export const inventoryDecider: Decider<Inventory, InventoryCommand, InventoryEvent> = {
  initialState: () => ({ stocked: false, total: 0, sold: 0, holds: ImmutableMap(), closed: ImmutableMap() }),

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
        const { dealId, holdId, quantity } = command.data;
        if (inventory.holds.has(holdId) || inventory.closed.has(holdId)) return [];
        if (!Number.isSafeInteger(quantity) || quantity < 1) throw issue('quantity', 'must be a whole number from 1');
        const left = unitsLeft(inventory, t);
        if (quantity > left) throw new CannotFulfil(left === 0 ? 'the deal is sold out' : `only ${left} units left`);
        return [{ type: 'UnitsHeld', data: { dealId, holdId, quantity, expiresAt: new Date(t + HOLD_TTL_MS).toISOString() } }];
      }
      case 'SellHeldUnits': {
        const { dealId, holdId } = command.data;
        if (inventory.closed.get(holdId) === 'sold') return [];
        const hold = inventory.holds.get(holdId);
        if (!hold || hold.expiresAt <= t) throw new CannotFulfil('the reservation has expired or was released');
        return [{ type: 'UnitsSold', data: { dealId, holdId, quantity: hold.quantity } }];
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
      case 'UnitsHeld':
        return { ...inventory, holds: inventory.holds.set(event.data.holdId, { quantity: event.data.quantity, expiresAt: Date.parse(event.data.expiresAt) }) };
      case 'UnitsSold':
        return { ...inventory, sold: inventory.sold + event.data.quantity, holds: inventory.holds.delete(event.data.holdId), closed: inventory.closed.set(event.data.holdId, 'sold') };
      case 'UnitsReleased':
        return { ...inventory, holds: inventory.holds.delete(event.data.holdId), closed: inventory.closed.set(event.data.holdId, 'released') };
    }
  },
};
