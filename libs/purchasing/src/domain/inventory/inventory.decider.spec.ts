import { ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '../../../../testing/src/decider-spec';
import { inventoryDecider } from './inventory.decider';

const given = deciderSpec(inventoryDecider);
const stock = (total: number) => ({ type: 'StockUnits' as const, data: { dealId: 'd1', total } });
const stocked = (total: number) => ({ type: 'InventoryStocked' as const, data: { dealId: 'd1', total } });

describe('inventory decider', () => {
  describe('an unstocked deal', () => {
    it('is stocked, even with zero units', () => {
      given([]).when(stock(50)).then([stocked(50)]);
      given([]).when(stock(0)).then([stocked(0)]);
    });
    it('refuses a negative or fractional total', () => {
      given([]).when(stock(-1)).thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'quantity' })] });
      given([]).when(stock(1.5)).thenThrows(ValidationFailed);
    });
  });
  describe('a stocked deal', () => {
    it('records a new total and ignores the same one', () => {
      given([stocked(50)]).when(stock(80)).then([stocked(80)]);
      given([stocked(50)]).when(stock(50)).then([]);
    });
  });
});
