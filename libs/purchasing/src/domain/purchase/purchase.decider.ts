import { Decider, DomainCommand, NotFound, ValidationFailed } from '@deals/kernel';
import { couponIdsFor, PurchaseEvent, PurchaseReserved } from './purchase.events';

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
    buyer: Record<string, string>;
  }
>;
export type PurchaseCommand = ReservePurchase | ClaimPurchase | ReleasePurchase | RecordPayment | RecordNonPayment | RecordResale;

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
  }),

  decide(command, purchase, now) {
    if (command.type === 'ReservePurchase') {
      // A reseller sale's id is its transaction reference's (resale-claim): the same sale sent
      // twice at once reserves it once, and both complete it.
      if (purchase.status !== 'none' && purchase.kind === 'resale' && command.data.via === 'reseller') return [];
      if (purchase.status !== 'none') throw refuse('is already reserved');
      return [{ type: 'PurchaseReserved', data: command.data }];
    }
    const { purchaseId, partnerId } = command.data;
    if (purchase.status === 'none' || purchase.partnerId !== partnerId) throw new NotFound(`purchase ${purchaseId} not found`);
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
        };
      case 'PurchaseClaimed':
        return { ...purchase, status: 'fulfilled', userId: event.data.userId, holdId: event.data.holdId, couponIds: event.data.couponIds };
      case 'PurchaseReleased':
        return { ...purchase, status: 'released' };
      case 'PurchasePaid':
        return { ...purchase, status: 'fulfilled', userId: event.data.userId, holdId: event.data.holdId, couponIds: event.data.couponIds };
      case 'PurchaseResold':
        return { ...purchase, status: 'fulfilled', holdId: event.data.holdId, couponIds: event.data.couponIds };
      case 'PurchaseNotPaid':
        return { ...purchase, status: event.data.outcome === 'declined' ? 'declined' : 'failed' };
    }
  },
};
