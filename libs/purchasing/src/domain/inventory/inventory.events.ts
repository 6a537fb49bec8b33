import { type DomainEvent, sandboxScoped } from '@deals/kernel';

/**
 * On a sandbox's own inventory of a deal (see `partnerInventoryStream`), every event names the
 * sandbox, so that a reader of the deal's live units (the deal view) can leave it out; an event
 * without it is the live deal's.
 */
export interface SandboxMark {
  sandbox?: string;
}

/** The deal's total units were set (by the catalogue import or an operator; a sandbox's copy by its first hold). */
export type InventoryStocked = DomainEvent<'InventoryStocked', { dealId: string; total: number } & SandboxMark>;
/**
 * Units set aside for a purchase until `expiresAt` (five minutes); they lapse by themselves.
 * `buyer` (see `buyerKey`) when the purchase's user is known when it holds (a card purchase).
 */
export type UnitsHeld = DomainEvent<
  'UnitsHeld',
  { dealId: string; holdId: string; quantity: number; expiresAt: string; buyer?: string } & SandboxMark
>;
/**
 * A live hold became a sale; `buyer` when known (the hold's, or the claiming user's). `expiresAt`
 * is the hold's (here and on a release), so that a reader can count open holds by expiry without
 * keeping each hold.
 */
export type UnitsSold = DomainEvent<
  'UnitsSold',
  { dealId: string; holdId: string; quantity: number; expiresAt?: string; buyer?: string } & SandboxMark
>;
/** A hold was given back: released by the caller, failed payment, or expiry. */
export type UnitsReleased = DomainEvent<
  'UnitsReleased',
  {
    dealId: string;
    holdId: string;
    quantity: number;
    expiresAt?: string;
    reason: 'released' | 'payment_failed' | 'expired' | 'abandoned' | 'refused';
  } & SandboxMark
>;

export type InventoryEvent = InventoryStocked | UnitsHeld | UnitsSold | UnitsReleased;

export const inventoryStream = (dealId: string) => `inventory-${dealId}`;

/**
 * The inventory a partner's purchases of a deal take units from: the deal's own for a live partner
 * (or none), a copy of the sandbox's own for a sandbox, so that test purchases never take live units.
 */
export const partnerInventoryStream = (dealId: string, partnerId: string | null | undefined) =>
  sandboxScoped(inventoryStream(dealId), partnerId);

/** Who a deal's per-user limit (`max_per_user`) counts for: a user is one partner's. */
export const buyerKey = (partnerId: string, userId: string) => `${partnerId}/${userId}`;

/** How long a hold lasts: five minutes. */
export const HOLD_TTL_MS = 5 * 60 * 1000;

/**
 * When a hold taken at `now` expires: five minutes later, rounded up to the whole second (so it
 * lasts 5 min to 5 min 0.999 s). Whole seconds let a reader count open holds by the second they
 * expire in, exactly, without keeping each hold (the deal view does).
 */
export const holdExpiry = (now: number) => Math.ceil((now + HOLD_TTL_MS) / 1000) * 1000;

const REPLACEMENT_SUFFIX = '-r';

/** The hold a claim takes in place of a reservation's lapsed or released one (CouponIssuer). */
export const replacementHoldId = (purchaseId: string) => `${purchaseId}${REPLACEMENT_SUFFIX}`;

/**
 * The purchases a hold may belong to: the one it is named after, and, for a replacement hold, the
 * one it replaces. Both are given, since an id of the older, random form may itself end in `-r`; the
 * other is then two characters shorter than any id the service draws, so no purchase has it.
 */
export function purchasesOfHold(holdId: string): string[] {
  return holdId.endsWith(REPLACEMENT_SUFFIX) ? [holdId, holdId.slice(0, -REPLACEMENT_SUFFIX.length)] : [holdId];
}
