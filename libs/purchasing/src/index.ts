/** Purchasing: inventory, purchases, coupons. */
export { PurchasingModule } from './purchasing.module';
export { StockInventory } from './commands/stock-inventory.command';
export { inventoryStream } from './domain/inventory/inventory.events';
/** Every projection purchasing owns (none yet: the deal's figures live in the catalogue's view). */
export const purchasingProjections = [];
