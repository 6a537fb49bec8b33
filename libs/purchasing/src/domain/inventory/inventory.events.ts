import type { DomainEvent } from '@deals/kernel';

/** The deal's total units were set (by the catalogue import or an operator). */
export type InventoryStocked = DomainEvent<'InventoryStocked', { dealId: string; total: number }>;

export type InventoryEvent = InventoryStocked;

export const inventoryStream = (dealId: string) => `inventory-${dealId}`;
