import { DealDetails, effectiveStateAt, unitsLeftAt } from '@deals/catalog';
import { CannotFulfil, ValidationFailed } from '@deals/kernel';
import { overPerUserLimit, shortOfUnits } from '../../domain/inventory/inventory.decider';

/** Deal types the service sells vouchers of itself (stored-card, full and reserved purchases). */
export const SOLD_TYPES: readonly string[] = ['daily-deal', 'on-going'];
/** Deal types a reseller may record sales of (vouchers, shipped goods, card-linked offers). */
export const RESOLD_TYPES: readonly string[] = ['daily-deal', 'on-going', 'card-linked'];

/**
 * Refuses a new sale of `view`'s deal at `now` (422 cannot_fufill, or cannot_fulfill on the reseller
 * call): a type not sold this way (an affiliate deal has no purchases or vouchers), a deal
 * not in flight (submitted, in review, approved but not started, paused, landed,
 * cancelled...), and vouchers that have already expired (they could never be redeemed).
 */
export function refuseUnsellable(view: DealDetails, now: number, types: readonly string[]): void {
  const deal = view.deal!;
  // eslint-disable-next-line no-restricted-syntax -- the deal's type, price and limit, ours
  if (!types.includes(deal.type)) throw new CannotFulfil(`${/^[aeiou]/.test(deal.type) ? 'an' : 'a'} ${deal.type} deal is not bought`);
  refuseOffSale(view, now);
}

/**
 * Why a deal takes no fresh units at `now` (not on sale, or its vouchers expired), or null: a claim
 * whose reservation lapsed or was released, and a paid purchase whose hold lapsed, take fresh units
 * only on these terms (a live hold, taken while the deal was on sale, is sold as it is).
 */
export function offSaleReason(view: DealDetails, now: number): string | null {
  if (effectiveStateAt(view.state, view.startAt!, view.endAt!, now) !== 'in-flight') return 'the deal is not on sale';
  return vouchersExpired(view, now) ? "the deal's vouchers have expired" : null;
}

/** Refuses a new sale of a deal that is not on sale at `now`, or whose vouchers have expired (see `offSaleReason`). */
function refuseOffSale(view: DealDetails, now: number): void {
  const reason = offSaleReason(view, now);
  if (reason !== null) throw new CannotFulfil(reason);
}

const vouchersExpired = (view: DealDetails, now: number) => {
  const expiresAt = view.deal!.expires_at;
  return typeof expiresAt === 'string' && Date.parse(expiresAt) <= now;
};

/** Refuses vouchers of a deal whose `expires_at` has passed: they could never be redeemed (even on a live hold). */
export function refuseExpiredVouchers(view: DealDetails, now: number): void {
  if (vouchersExpired(view, now)) throw new CannotFulfil("the deal's vouchers have expired");
}

/** Refuses more units in one purchase than the deal's per-user limit allows (the inventory counts a known user's other units too). */
export function refuseOverLimit(view: DealDetails, quantity: number): void {
  const limit = view.deal!.max_per_user;
  // eslint-disable-next-line no-restricted-syntax -- the deal's type, price and limit, ours
  if (limit !== undefined && limit !== null && quantity > limit) throw new CannotFulfil(`at most ${limit} per user`);
}

/**
 * Refuses a card purchase of a free deal (current_price 0): a processor charges only a positive
 * amount, and there is nothing to charge. Such a deal is reserved and claimed instead.
 */
export function refuseFreeCardPurchase(view: DealDetails): void {
  if (view.deal!.current_price === 0) throw new CannotFulfil('a free deal is not bought with a card: reserve and claim it');
}

/**
 * Refuses a quantity whose amount (the deal's price × quantity, in cents) is beyond exact integer
 * arithmetic: such an amount could not be charged or recorded to the cent. `field`: the quantity's
 * name in the call (`quantity`, or `num_bought` for a reservation).
 */
export function refuseUnchargeableAmount(view: DealDetails, quantity: number, field = 'quantity'): void {
  const price = view.deal!.current_price;
  if (!Number.isSafeInteger(price * quantity)) {
    throw new ValidationFailed([
      {
        type: 'invalid',
        resource: 'purchase',
        field,
        // eslint-disable-next-line no-restricted-syntax -- the deal's type, price and limit, ours
        message: `at the deal's price of ${price} cents, that many units cost more than can be charged`,
      },
    ]);
  }
}

/**
 * Refuses more units than the deal's view shows left at `now`, in the inventory's words. The view
 * may trail the inventory by a few milliseconds: the inventory's decider still decides; this spares
 * a call that will be refused the work it would do first (the full purchase's user and card).
 */
export function refuseShortStock(view: DealDetails, quantity: number, now: number): void {
  const short = shortOfUnits(quantity, unitsLeftAt(view.inventory, now));
  if (short) throw short;
}

/**
 * Refuses more units than the deal's per-user limit leaves a known user who has bought `bought`
 * of it before, in the inventory's words (which still decides, counting open holds too).
 */
export function refuseOverUserLimit(view: DealDetails, quantity: number, bought: number): void {
  const limit = view.deal!.max_per_user;
  if (limit !== undefined && limit !== null && bought + quantity > limit) throw overPerUserLimit(limit, bought);
}
