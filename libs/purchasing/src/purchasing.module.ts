import { Module } from '@nestjs/common';
import { StockInventoryHandler } from './commands/stock-inventory.command';

/** Inventory, purchases and coupons (so far: stocking a deal's inventory). */
@Module({ providers: [StockInventoryHandler] })
export class PurchasingModule {}
