import type { DomainEvent } from '@deals/kernel';

/** The deal's total units were set (by the catalogue import or an operator). */
export type InventoryStocked = DomainEvent<'InventoryStocked', { dealId: string; total: number }>;
/** Units set aside for a purchase until `expiresAt` (five minutes); they lapse by themselves. */
export type UnitsHeld = DomainEvent<'UnitsHeld', { dealId: string; holdId: string; quantity: number; expiresAt: string }>;
/** A live hold became a sale. */
export type UnitsSold = DomainEvent<'UnitsSold', { dealId: string; holdId: string; quantity: number }>;
/** A hold was given back: released by the caller, failed payment, or expiry. */
export type UnitsReleased = DomainEvent<'UnitsReleased', { dealId: string; holdId: string; quantity: number; reason: 'released' | 'payment_failed' | 'expired' | 'abandoned' }>;

export type InventoryEvent = InventoryStocked | UnitsHeld | UnitsSold | UnitsReleased;

export const inventoryStream = (dealId: string) => `inventory-${dealId}`;

/** How long a hold lasts (interface part 3.2, 8). */
export const HOLD_TTL_MS = 5 * 60 * 1000;
