import { Decider, DomainCommand, NotFound, ValidationFailed } from '@deals/kernel';
import { couponShares, RefundReason, RefundState } from '../refund/refund-rules';
import { couponIdsFor, PurchaseEvent, PurchaseReserved, ResaleBuyerErased } from './purchase.events';
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
export type PurchaseCommand =
  | ReservePurchase
  | ClaimPurchase
  | ReleasePurchase
  | RecordPayment
  | RecordNonPayment
  | RecordResale
  | RequestRefund
  | RecordRefundOutcome
  | EraseResaleBuyer;

export type PurchaseStatus = 'none' | 'reserved' | 'fulfilled' | 'released' | 'declined' | 'failed';
/**
 * How the purchase is paid for: a reservation (`POST /purchases/reserve`) the partner pays for and
 * then claims or releases; a stored card the service charges; a reseller's recorded sale. Only a
 * reservation is claimed or released: a card purchase or a resale completes on its own path.
 */
export type PurchaseKind = 'reservation' | 'card' | 'resale';

export interface Purchase {
  status: PurchaseStatus;
  kind: PurchaseKind | null;
  partnerId: string | null;
  /** The deal bought (from the reservation's snapshot). */
  dealId: string | null;
  quantity: number;
  unitPrice: number;
  holdId: string | null;
  userId: string | null;
  couponIds: string[];
  /** What was paid for it, cents (0 until it is). */
  amountCents: number;
  /** The processor's charge of a card purchase. */
  chargeId: string | null;
  refunds: PurchaseRefund[];
  /** A reseller's sale: its `transaction_reference` (from the reservation, or the sale for the oldest). */
  transactionReference: string | null;
  /** When a reseller sale's buyer was erased (ISO 8601), or null. */
  buyerErasedAt: string | null;
}

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
export function notAReservation(purchase: Purchase): ValidationFailed | null {
  return purchase.kind === 'reservation' ? null : refuse('is not a reservation: only a reserved purchase is claimed or released');
}

export const purchaseDecider: Decider<Purchase, PurchaseCommand, PurchaseEvent> = {
  initialState: () => ({
    status: 'none',
    kind: null,
    partnerId: null,
    dealId: null,
    quantity: 0,
    unitPrice: 0,
    holdId: null,
    userId: null,
    couponIds: [],
    amountCents: 0,
    chargeId: null,
    refunds: [],
    transactionReference: null,
    buyerErasedAt: null,
  }),

  decide(command, purchase, now) {
    if (command.type === 'ReservePurchase') {
      // A reseller sale's id is its transaction reference's (resale-claim): the same sale sent
      // twice at once reserves it once, and both complete it.
      if (purchase.status !== 'none' && purchase.kind === 'resale' && command.data.via === 'reseller') return [];
      if (purchase.status !== 'none') throw refuse('is already reserved');
      return [{ type: 'PurchaseReserved', data: command.data }];
    }
    if (command.type === 'EraseResaleBuyer') return eraseResaleBuyer(command.data, purchase, now);
    const { purchaseId, partnerId } = command.data;
    if (purchase.status === 'none' || purchase.partnerId !== partnerId) throw new NotFound('purchase not found');
    if (command.type === 'RecordPayment') {
      if (purchase.status === 'fulfilled') return [];
      if (purchase.status !== 'reserved') throw refuse(`is ${purchase.status} and cannot be paid`);
      const { userId, creditCardId, chargeId, sessionId, holdId } = command.data;
      return [
        {
          type: 'PurchasePaid',
          data: {
            purchaseId,
            userId,
            creditCardId,
            chargeId,
            sessionId,
            holdId,
            amountCents: purchase.unitPrice * purchase.quantity,
            couponIds: couponIdsFor(purchaseId, purchase.quantity),
            paidAt: now.toISOString(),
          },
        },
      ];
    }
    if (command.type === 'RecordResale') {
      if (purchase.status === 'fulfilled') return [];
      const { holdId, transactionReference, transactionDate, amountCents, buyer } = command.data;
      return [
        {
          type: 'PurchaseResold',
          data: {
            purchaseId,
            partnerId,
            holdId,
            transactionReference,
            transactionDate,
            amountCents,
            buyer,
            couponIds: couponIdsFor(purchaseId, purchase.quantity),
            resoldAt: now.toISOString(),
          },
        },
      ];
    }
    if (command.type === 'RequestRefund') return requestRefund(command.data, purchase, now);
    if (command.type === 'RecordRefundOutcome') {
      const refund = purchase.refunds.find((r) => r.refundId === command.data.refundId);
      if (!refund) throw new NotFound('refund not found');
      if (refund.state !== 'pending') return [];
      const { refundId } = command.data;
      const settledAt = now.toISOString();
      return command.data.outcome === 'succeeded'
        ? [{ type: 'RefundSucceeded', data: { refundId, purchaseId, processorRefundId: command.data.processorRefundId, settledAt } }]
        : [{ type: 'RefundFailed', data: { refundId, purchaseId, reason: command.data.reason, settledAt } }];
    }
    if (command.type === 'RecordNonPayment') {
      if (purchase.status !== 'reserved') return [];
      return [{ type: 'PurchaseNotPaid', data: { purchaseId, outcome: command.data.outcome, reason: command.data.reason } }];
    }
    if (command.type === 'ReleasePurchase' || command.type === 'ClaimPurchase') {
      const refusal = notAReservation(purchase);
      if (refusal) throw refusal;
    }
    if (command.type === 'ReleasePurchase') {
      if (purchase.status === 'released') return [];
      if (purchase.status === 'fulfilled') throw refuse('is claimed and can no longer be released');
      return [{ type: 'PurchaseReleased', data: { purchaseId, reason: 'released' } }];
    }
    const { userId, holdId } = command.data;
    if (purchase.status === 'fulfilled') {
      if (purchase.userId === userId) return [];
      throw refuse('is already claimed by another user');
    }
    return [
      {
        type: 'PurchaseClaimed',
        data: {
          purchaseId,
          userId,
          holdId,
          amountCents: purchase.unitPrice * purchase.quantity,
          couponIds: couponIdsFor(purchaseId, purchase.quantity),
          claimedAt: now.toISOString(),
        },
      },
    ];
  },

  evolve(purchase, event) {
    switch (event.type) {
      case 'PurchaseReserved':
        return {
          ...purchase,
          status: 'reserved',
          kind: event.data.payment ? 'card' : event.data.via === 'reseller' ? 'resale' : 'reservation',
          partnerId: event.data.partnerId,
          dealId: event.data.deal.dealId,
          quantity: event.data.quantity,
          unitPrice: event.data.deal.unitPrice,
          holdId: event.data.holdId,
          transactionReference: event.data.transactionReference ?? null,
        };
      case 'PurchaseClaimed': {
        const { userId, holdId, couponIds, amountCents } = event.data;
        return { ...purchase, status: 'fulfilled', userId, holdId, couponIds, amountCents };
      }
      case 'PurchaseReleased':
        return { ...purchase, status: 'released' };
      case 'PurchasePaid': {
        const { userId, holdId, couponIds, amountCents, chargeId } = event.data;
        return { ...purchase, status: 'fulfilled', userId, holdId, couponIds, amountCents, chargeId };
      }
      case 'PurchaseResold':
        return {
          ...purchase,
          status: 'fulfilled',
          holdId: event.data.holdId,
          couponIds: event.data.couponIds,
          amountCents: event.data.amountCents,
          transactionReference: event.data.transactionReference,
        };
      case 'ResaleBuyerErased':
        return { ...purchase, buyerErasedAt: event.data.erasedAt };
      case 'RefundRequested': {
        const { refundId, couponIds, amountCents, forced } = event.data;
        return { ...purchase, refunds: [...purchase.refunds, { refundId, couponIds, amountCents, state: 'pending', forced }] };
      }
      case 'RefundSucceeded':
      case 'RefundFailed': {
        const state: RefundState = event.type === 'RefundSucceeded' ? 'succeeded' : 'failed';
        return { ...purchase, refunds: purchase.refunds.map((r) => (r.refundId === event.data.refundId ? { ...r, state } : r)) };
      }
      case 'PurchaseNotPaid':
        return { ...purchase, status: event.data.outcome === 'declined' ? 'declined' : 'failed' };
    }
  },
};

/**
 * The erasure of a reseller sale's buyer, once: another partner's sale or one that never was is
 * not found; a purchase that is not a reseller's has no such buyer (its buyer is a user).
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
      data: { purchaseId, partnerId: purchase.partnerId!, transactionReference, by, erasedAt: now.toISOString() },
    },
  ];
}

/** The coupons of the purchase no refund holds: neither one under way nor one that paid back. */
export function refundableCoupons(purchase: Purchase): string[] {
  const taken = new Set(purchase.refunds.filter((r) => r.state !== 'failed').flatMap((r) => r.couponIds));
  return purchase.couponIds.filter((id) => !taken.has(id));
}

/** What has been paid back of the purchase, cents, and what refunds under way would pay back. */
export function refundedCents(purchase: Purchase): { succeeded: number; pending: number } {
  const sum = (state: RefundState) => purchase.refunds.filter((r) => r.state === state).reduce((total, r) => total + r.amountCents, 0);
  return { succeeded: sum('succeeded'), pending: sum('pending') };
}

function requestRefund(data: RequestRefund['data'], purchase: Purchase, now: Date): PurchaseEvent[] {
  const { purchaseId, refundId, couponIds, reason, note, forced } = data;
  const known = purchase.refunds.find((r) => r.refundId === refundId);
  if (known) return [];
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
  return [
    {
      type: 'RefundRequested',
      data: {
        refundId,
        purchaseId,
        partnerId: data.partnerId,
        userId: purchase.userId,
        couponIds,
        amountCents,
        reason,
        note,
        forced,
        requestedAt: now.toISOString(),
      },
    },
  ];
}

const refundRefused = (message: string) =>
  // eslint-disable-next-line no-restricted-syntax -- a message of ours, its field named
  new ValidationFailed([{ type: 'invalid', resource: 'refund', field: 'coupon_ids', message }], `coupon_ids ${message}`);
