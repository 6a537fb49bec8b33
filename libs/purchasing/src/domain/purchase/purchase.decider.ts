import { Decider, DomainCommand, NotFound, unknownCommand, ValidationFailed } from '@deals/kernel';
import { couponShares, RefundReason, RefundState } from '../refund/refund-rules';
import {
  couponIdsFor,
  GiftMailed,
  PurchaseEvent,
  PurchaseReserved,
  RefundFailed,
  RefundRequested,
  RefundSucceeded,
  ResaleBuyerErased,
} from './purchase.events';
import type { ResaleBuyer } from './resale-buyer';

export type ReservePurchase = DomainCommand<'ReservePurchase', PurchaseReserved['data']>;
export type ClaimPurchase = DomainCommand<'ClaimPurchase', { purchaseId: string; partnerId: string; userId: string; holdId: string }>;
export type ReleasePurchase = DomainCommand<'ReleasePurchase', { purchaseId: string; partnerId: string }>;
export type RecordPayment = DomainCommand<
  'RecordPayment',
  {
    purchaseId: string;
    partnerId: string;
    userId: string;
    creditCardId: string;
    chargeId: string;
    sessionId: string | null;
    holdId: string;
  }
>;
export type RecordNonPayment = DomainCommand<
  'RecordNonPayment',
  { purchaseId: string; partnerId: string; outcome: 'declined' | 'error'; reason: string }
>;
export type RecordResale = DomainCommand<
  'RecordResale',
  {
    purchaseId: string;
    partnerId: string;
    holdId: string;
    transactionReference: string;
    transactionDate: string;
    amountCents: number;
    buyer: ResaleBuyer;
  }
>;
/** Erases a reseller sale's buyer: asked by its partner (`partnerId`), or by an operator (any partner's sale, `partnerId` null). */
export type EraseResaleBuyer = DomainCommand<
  'EraseResaleBuyer',
  { purchaseId: string; partnerId: string | null; by: ResaleBuyerErased['data']['by'] }
>;
/** Refunds `couponIds` (its coupons already held for it: see the coupon decider's `StartRefund`). */
export type RequestRefund = DomainCommand<
  'RequestRefund',
  {
    purchaseId: string;
    partnerId: string;
    refundId: string;
    couponIds: string[];
    reason: RefundReason;
    note: string | null;
    forced: boolean;
  }
>;
/** What became of a requested refund's money: `processorRefundId` null for a claimed reservation's, which the partner pays back. */
export type RecordRefundOutcome = DomainCommand<
  'RecordRefundOutcome',
  { purchaseId: string; partnerId: string; refundId: string } & (
    { outcome: 'succeeded'; processorRefundId: string | null } | { outcome: 'failed'; reason: string }
  )
>;
/** What became of a gift's mail to its recipient (see `GiftMailed`). */
export type RecordGiftMail = DomainCommand<
  'RecordGiftMail',
  { purchaseId: string; partnerId: string } & Pick<GiftMailed['data'], 'outcome' | 'reason'>
>;
export type PurchaseCommand =
  | ReservePurchase
  | ClaimPurchase
  | ReleasePurchase
  | RecordPayment
  | RecordNonPayment
  | RecordResale
  | RequestRefund
  | RecordRefundOutcome
  | EraseResaleBuyer
  | RecordGiftMail;

/**
 * How the purchase is paid for: a reservation (`POST /purchases/reserve`) the partner pays for and
 * then claims or releases; a stored card the service charges; a reseller's recorded sale. Only a
 * reservation is claimed or released: a card purchase or a resale completes on its own path.
 */
export type PurchaseKind = 'reservation' | 'card' | 'resale';

/** What every purchase has from its reservation on: the deal and units held for it, and how it is paid for. */
export type Reservation = {
  partnerId: string;
  dealId: string;
  quantity: number;
  unitPrice: number;
  holdId: string;
} & (
  | { kind: 'reservation' }
  | {
      kind: 'card';
      /** A gift's recipient (who holds its coupons), its mail's time (null: once sold) and whether its mail is recorded; null: bought for the payer. */
      gift: { recipient: string; deliverAt: string | null; mailed: boolean } | null;
    }
  | {
      kind: 'resale';
      /** The sale's `transaction_reference`: from the reservation, or from the sale for the oldest. */
      transactionReference: string | null;
      /** When the sale's buyer was erased (ISO 8601), or null. */
      buyerErasedAt: string | null;
    }
);

/** A paid purchase: its coupons, what was paid, who holds the coupons and who paid, and its refunds. */
export type FulfilledPurchase = Reservation & {
  status: 'fulfilled';
  couponIds: string[];
  /** What was paid for it, cents. */
  amountCents: number;
  /** The user the coupons were issued to: the claiming user, the card's or a gift's recipient; null for a resale (its buyer is the reseller's). */
  holder: string | null;
  /** The card charge that paid: a card purchase's; null when the partner (a claim) or a reseller was paid. */
  charge: { payer: string; chargeId: string } | null;
  refunds: PurchaseRefund[];
};

/** `reserved`: units held, not yet paid; `released`: given up; `declined`/`failed`: the card was not charged. */
export type UnpaidPurchase = Reservation & { status: 'reserved' | 'released' | 'declined' | 'failed' };

/** A purchase that exists: reserved, and perhaps paid or given up since. */
export type ExistingPurchase = UnpaidPurchase | FulfilledPurchase;

export type Purchase = { status: 'none' } | ExistingPurchase;

export interface PurchaseRefund {
  refundId: string;
  couponIds: string[];
  amountCents: number;
  state: RefundState;
  /** An operator's refund of coupons the rules keep. */
  forced: boolean;
}

const refuse = (message: string) => new ValidationFailed([{ type: 'invalid', resource: 'purchase', field: 'id', message }]);

/** The refusal of a claim or release of a purchase that is not a reservation (null for a reservation). */
export function notAReservation(purchase: ExistingPurchase): ValidationFailed | null {
  return purchase.kind === 'reservation' ? null : refuse('is not a reservation: only a reserved purchase is claimed or released');
}

/** The partner's purchase; one that never was, or another partner's, is not found. */
function partnersPurchase(purchase: Purchase, partnerId: string): ExistingPurchase {
  if (purchase.status === 'none' || purchase.partnerId !== partnerId) throw new NotFound('purchase not found');
  return purchase;
}

export const purchaseDecider: Decider<Purchase, PurchaseCommand, PurchaseEvent> = {
  initialState: () => ({ status: 'none' }),

  decide(command, purchase, now) {
    switch (command.type) {
      case 'ReservePurchase':
        // A reseller sale's id is its transaction reference's (resale-claim): the same sale sent
        // twice at once reserves it once, and both complete it.
        if (purchase.status !== 'none' && purchase.kind === 'resale' && command.data.via === 'reseller') return [];
        if (purchase.status !== 'none') throw refuse('is already reserved');
        return [{ type: 'PurchaseReserved', data: command.data }];
      case 'ClaimPurchase': {
        const { purchaseId, partnerId, userId, holdId } = command.data;
        const claimed = partnersPurchase(purchase, partnerId);
        const refusal = notAReservation(claimed);
        if (refusal) throw refusal;
        if (claimed.status === 'fulfilled') {
          if (claimed.holder === userId) return [];
          throw refuse('is already claimed by another user');
        }
        const { quantity, unitPrice } = claimed;
        const couponIds = couponIdsFor(purchaseId, quantity);
        const claimedAt = now.toISOString();
        return [{ type: 'PurchaseClaimed', data: { purchaseId, userId, holdId, amountCents: unitPrice * quantity, couponIds, claimedAt } }];
      }
      case 'ReleasePurchase': {
        const released = partnersPurchase(purchase, command.data.partnerId);
        const refusal = notAReservation(released);
        if (refusal) throw refusal;
        if (released.status === 'released') return [];
        if (released.status === 'fulfilled') throw refuse('is claimed and can no longer be released');
        return [{ type: 'PurchaseReleased', data: { purchaseId: command.data.purchaseId, reason: 'released' } }];
      }
      case 'RecordPayment': {
        const { purchaseId, partnerId, userId, creditCardId, chargeId, sessionId, holdId } = command.data;
        const paid = partnersPurchase(purchase, partnerId);
        if (paid.status === 'fulfilled') return [];
        if (paid.status !== 'reserved') throw refuse(`is ${paid.status} and cannot be paid`);
        const amountCents = paid.unitPrice * paid.quantity;
        const couponIds = couponIdsFor(purchaseId, paid.quantity);
        const data = { purchaseId, userId, creditCardId, chargeId, sessionId, holdId, amountCents, couponIds, paidAt: now.toISOString() };
        return [{ type: 'PurchasePaid', data }];
      }
      case 'RecordNonPayment': {
        const { purchaseId, partnerId, outcome, reason } = command.data;
        if (partnersPurchase(purchase, partnerId).status !== 'reserved') return [];
        return [{ type: 'PurchaseNotPaid', data: { purchaseId, outcome, reason } }];
      }
      case 'RecordResale': {
        const { purchaseId, partnerId, holdId, transactionReference, transactionDate, amountCents, buyer } = command.data;
        const resold = partnersPurchase(purchase, partnerId);
        if (resold.status === 'fulfilled') return [];
        const couponIds = couponIdsFor(purchaseId, resold.quantity);
        const data = { purchaseId, partnerId, holdId, transactionReference, transactionDate, amountCents, buyer, couponIds };
        return [{ type: 'PurchaseResold', data: { ...data, resoldAt: now.toISOString() } }];
      }
      case 'EraseResaleBuyer':
        return eraseResaleBuyer(command.data, purchase, now);
      case 'RecordGiftMail': {
        const { purchaseId, partnerId, outcome, reason } = command.data;
        const gifted = partnersPurchase(purchase, partnerId);
        if (gifted.kind !== 'card' || !gifted.gift) throw refuse('is not a gift');
        if (gifted.gift.mailed) return [];
        if (gifted.status !== 'fulfilled') throw refuse(`is ${gifted.status}: only a paid gift is mailed`);
        return [{ type: 'GiftMailed', data: { purchaseId, outcome, reason, mailedAt: now.toISOString() } }];
      }
      case 'RequestRefund':
        return requestRefund(command.data, partnersPurchase(purchase, command.data.partnerId), now);
      case 'RecordRefundOutcome': {
        const { purchaseId, partnerId, refundId } = command.data;
        const refund = refundOf(partnersPurchase(purchase, partnerId), refundId);
        if (!refund) throw new NotFound('refund not found');
        if (refund.state !== 'pending') return [];
        const settledAt = now.toISOString();
        return command.data.outcome === 'succeeded'
          ? [{ type: 'RefundSucceeded', data: { refundId, purchaseId, processorRefundId: command.data.processorRefundId, settledAt } }]
          : [{ type: 'RefundFailed', data: { refundId, purchaseId, reason: command.data.reason, settledAt } }];
      }
      default:
        return unknownCommand(command);
    }
  },

  evolve(purchase, event) {
    if (event.type === 'PurchaseReserved') return reserved(event.data);
    // Every other event follows the reservation: none comes to a purchase that was never reserved.
    if (purchase.status === 'none') return purchase;
    switch (event.type) {
      case 'PurchaseClaimed': {
        const { userId, holdId, couponIds, amountCents } = event.data;
        return { ...purchase, status: 'fulfilled', holdId, couponIds, amountCents, holder: userId, charge: null, refunds: [] };
      }
      case 'PurchaseReleased':
        return { ...purchase, status: 'released' };
      case 'PurchasePaid': {
        const { userId, holdId, couponIds, amountCents, chargeId } = event.data;
        const charge = { payer: userId, chargeId };
        // A gift's coupons are its recipient's; the payer is the card's user either way.
        const holder = purchase.kind === 'card' && purchase.gift ? purchase.gift.recipient : userId;
        return { ...purchase, status: 'fulfilled', holdId, couponIds, amountCents, holder, charge, refunds: [] };
      }
      case 'PurchaseNotPaid':
        return { ...purchase, status: event.data.outcome === 'declined' ? 'declined' : 'failed' };
      case 'PurchaseResold': {
        const { holdId, couponIds, amountCents, transactionReference } = event.data;
        const sale = { ...purchase, status: 'fulfilled' as const, holdId, couponIds, amountCents, holder: null, charge: null, refunds: [] };
        return sale.kind === 'resale' ? { ...sale, transactionReference } : sale;
      }
      case 'ResaleBuyerErased':
        return purchase.kind === 'resale' ? { ...purchase, buyerErasedAt: event.data.erasedAt } : purchase;
      case 'GiftMailed':
        return purchase.kind === 'card' && purchase.gift ? { ...purchase, gift: { ...purchase.gift, mailed: true } } : purchase;
      case 'RefundRequested':
      case 'RefundSucceeded':
      case 'RefundFailed':
        // Only a fulfilled purchase is refunded.
        return purchase.status === 'fulfilled' ? { ...purchase, refunds: evolveRefunds(purchase.refunds, event) } : purchase;
      default: {
        const unhandled: never = event;
        return unhandled;
      }
    }
  },
};

/** The purchase a reservation starts: its kind told by how it is paid for. */
function reserved(data: PurchaseReserved['data']): Purchase {
  const held = { status: 'reserved' as const, partnerId: data.partnerId, dealId: data.deal.dealId, quantity: data.quantity };
  const reservation = { ...held, unitPrice: data.deal.unitPrice, holdId: data.holdId };
  if (data.payment) {
    const gift = data.gift ? { recipient: data.gift.userId, deliverAt: data.gift.deliverAt, mailed: false } : null;
    return { ...reservation, kind: 'card', gift };
  }
  if (data.via !== 'reseller') return { ...reservation, kind: 'reservation' };
  return { ...reservation, kind: 'resale', transactionReference: data.transactionReference ?? null, buyerErasedAt: null };
}

function evolveRefunds(refunds: PurchaseRefund[], event: RefundRequested | RefundSucceeded | RefundFailed): PurchaseRefund[] {
  if (event.type === 'RefundRequested') {
    const { refundId, couponIds, amountCents, forced } = event.data;
    return [...refunds, { refundId, couponIds, amountCents, state: 'pending', forced }];
  }
  const state: RefundState = event.type === 'RefundSucceeded' ? 'succeeded' : 'failed';
  return refunds.map((r) => (r.refundId === event.data.refundId ? { ...r, state } : r));
}

/**
 * The erasure of a reseller sale's buyer, once: another partner's sale or one that never was is
 * not found (an operator's, `partnerId` null, finds any partner's); a purchase that is not a
 * reseller's has no such buyer (its buyer is a user).
 */
function eraseResaleBuyer(data: EraseResaleBuyer['data'], purchase: Purchase, now: Date): PurchaseEvent[] {
  const { purchaseId, partnerId, by } = data;
  if (purchase.status === 'none' || (partnerId !== null && purchase.partnerId !== partnerId)) throw new NotFound('purchase not found');
  if (purchase.kind !== 'resale' || purchase.transactionReference === null)
    throw refuse("is not a reseller's sale: its buyer is a user, erased with DELETE /users/:user_id/personal_data");
  if (purchase.buyerErasedAt !== null) return [];
  const { transactionReference } = purchase;
  return [
    {
      type: 'ResaleBuyerErased',
      data: { purchaseId, partnerId: purchase.partnerId, transactionReference, by, erasedAt: now.toISOString() },
    },
  ];
}

/** The purchase's refund `refundId` (only a fulfilled purchase has refunds). */
export function refundOf(purchase: Purchase, refundId: string): PurchaseRefund | undefined {
  return purchase.status === 'fulfilled' ? purchase.refunds.find((r) => r.refundId === refundId) : undefined;
}

/** The coupons of the purchase no refund holds: neither one under way nor one that paid back. */
export function refundableCoupons(purchase: FulfilledPurchase): string[] {
  const taken = new Set(purchase.refunds.filter((r) => r.state !== 'failed').flatMap((r) => r.couponIds));
  return purchase.couponIds.filter((id) => !taken.has(id));
}

/** What has been paid back of the purchase, cents, and what refunds under way would pay back. */
export function refundedCents(purchase: FulfilledPurchase): { succeeded: number; pending: number } {
  const sum = (state: RefundState) => purchase.refunds.filter((r) => r.state === state).reduce((total, r) => total + r.amountCents, 0);
  return { succeeded: sum('succeeded'), pending: sum('pending') };
}

function requestRefund(data: RequestRefund['data'], purchase: ExistingPurchase, now: Date): PurchaseEvent[] {
  const { purchaseId, refundId, couponIds, reason, note, forced } = data;
  if (refundOf(purchase, refundId)) return [];
  if (purchase.kind === 'resale')
    throw refuse("is a reseller's sale: its coupons are cancelled with DELETE /api/v3/coupons/:coupon_id/cancel");
  if (purchase.status !== 'fulfilled') throw refuse(`is ${purchase.status}: only a paid purchase is refunded`);
  if (couponIds.length === 0) throw refundRefused('names no coupon to refund');
  const open = new Set(refundableCoupons(purchase));
  const foreign = couponIds.find((id) => !purchase.couponIds.includes(id));
  if (foreign) throw refundRefused('names a coupon that is not one of this purchase');
  const taken = couponIds.find((id) => !open.has(id));
  if (taken) throw refundRefused('names a coupon that is already part of another refund');
  if (new Set(couponIds).size !== couponIds.length) throw refundRefused('names a coupon twice');
  const shares = couponShares(purchase.amountCents, purchase.couponIds);
  const amountCents = couponIds.reduce((total, id) => total + shares.get(id)!, 0);
  const { succeeded, pending } = refundedCents(purchase);
  // Shares add up to the amount, and no coupon is in two refunds: this holds by construction; checked all the same.
  if (succeeded + pending + amountCents > purchase.amountCents) throw refundRefused('would pay back more than was paid');
  const { partnerId } = data;
  const requestedAt = now.toISOString();
  return [
    {
      type: 'RefundRequested',
      // The refund is the payer's (its money goes back to the card charged), a gift's too.
      data: {
        refundId,
        purchaseId,
        partnerId,
        userId: purchase.charge?.payer ?? purchase.holder,
        couponIds,
        amountCents,
        reason,
        note,
        forced,
        requestedAt,
      },
    },
  ];
}

const refundRefused = (message: string) =>
  // eslint-disable-next-line no-restricted-syntax -- a message of ours, its field named
  new ValidationFailed([{ type: 'invalid', resource: 'refund', field: 'coupon_ids', message }], `coupon_ids ${message}`);
