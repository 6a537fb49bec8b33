import { Decider, DomainCommand, ValidationFailed } from '@deals/kernel';
import { InventoryEvent } from './inventory.events';

export type StockUnits = DomainCommand<'StockUnits', { dealId: string; total: number }>;
export type InventoryCommand = StockUnits;

/**
 * Units of one deal. `num_left` is derived: total - sold - live holds (holds and sales arrive with
 * the purchasing issue; until then nothing is sold).
 */
export interface Inventory {
  stocked: boolean;
  total: number;
  sold: number;
}

export const unitsLeft = (inventory: Inventory) => Math.max(0, inventory.total - inventory.sold);

export const inventoryDecider: Decider<Inventory, InventoryCommand, InventoryEvent> = {
  initialState: () => ({ stocked: false, total: 0, sold: 0 }),
  decide(command, inventory) {
    const { dealId, total } = command.data;
    if (!Number.isSafeInteger(total) || total < 0) {
      throw new ValidationFailed([{ type: 'invalid', resource: 'deal', field: 'quantity', message: 'must be a whole number, not negative' }]);
    }
    if (total < inventory.sold) {
      throw new ValidationFailed([{ type: 'invalid', resource: 'deal', field: 'quantity', message: `cannot be below the ${inventory.sold} units already sold` }]);
    }
    if (inventory.stocked && total === inventory.total) return [];
    return [{ type: 'InventoryStocked', data: { dealId, total } }];
  },
  evolve(inventory, event) {
    switch (event.type) {
      case 'InventoryStocked':
        return { ...inventory, stocked: true, total: event.data.total };
    }
  },
};
