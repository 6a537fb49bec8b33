import type { DomainEvent } from '@deals/kernel';
import type { RefundReason } from '../refund/refund-rules';
import type { ResaleBuyer } from './resale-buyer';
import type { ShippingAddress } from './shipping-address';

/** What a purchase keeps of its deal at the time of sale (for its answers and for auditors). */
export interface DealSnapshot {
  dealId: string;
  title: string;
  type: string;
  imageUrl: string | null;
  unitPrice: number;
  expiresAt: string | null;
  expirationDays: number | null;
  fulfillmentMethod?: string;
}

/** The snapshot of a catalogue deal a purchase keeps. */
export function dealSnapshot(deal: {
  id: string;
  title: string;
  type: string;
  image_url?: string;
  current_price: number;
  expires_at?: string;
  expiration_days?: number;
  fulfillment_method: string;
}): DealSnapshot {
  return {
    dealId: deal.id,
    title: deal.title,
    type: deal.type,
    imageUrl: deal.image_url ?? null,
    unitPrice: deal.current_price,
    expiresAt: deal.expires_at ?? null,
    expirationDays: deal.expiration_days ?? null,
    fulfillmentMethod: deal.fulfillment_method,
  };
}

/**
 * A purchase bought for someone else: `userId` holds its coupons (and is mailed them at
 * `deliverAt`, ISO 8601; null: once sold); `name` (how the buyer names them) and `message` are
 * personal data of the recipient, sealed under the recipient's key.
 */
export interface PurchaseGift {
  userId: string;
  name: string;
  message: string | null;
  deliverAt: string | null;
}

export type PurchaseReserved = DomainEvent<
  'PurchaseReserved',
  {
    purchaseId: string;
    partnerId: string;
    deal: DealSnapshot;
    quantity: number;
    holdId: string;
    reservedAt: string;
    holdExpiresAt: string;
    /** Set when the service itself charges a stored card (POST /purchases): whom, with which card. */
    payment?: { userId: string; creditCardId: string; sessionId: string | null };
    /** 'reseller' for a sale a reseller recorded; absent for the others. */
    via?: 'reseller';
    /** A reseller's sale: its `transaction_reference` (absent from the oldest events), under which its terms are kept. */
    transactionReference?: string;
    shipping?: ShippingAddress;
    /** A card purchase bought as a gift: its recipient, who holds the coupons. */
    gift?: PurchaseGift;
  }
>;
/** The partner processed the payment and names the user (a reservation's claim). */
export type PurchaseClaimed = DomainEvent<
  'PurchaseClaimed',
  { purchaseId: string; userId: string; amountCents: number; holdId: string; couponIds: string[]; claimedAt: string }
>;
export type PurchaseReleased = DomainEvent<'PurchaseReleased', { purchaseId: string; reason: 'released' }>;
/** A stored card was charged through the processor for the held units. */
export type PurchasePaid = DomainEvent<
  'PurchasePaid',
  {
    purchaseId: string;
    userId: string;
    creditCardId: string;
    amountCents: number;
    chargeId: string;
    holdId: string;
    couponIds: string[];
    sessionId: string | null;
    paidAt: string;
  }
>;
/** The processor declined the card, or failed; nothing was charged and the hold was released. */
export type PurchaseNotPaid = DomainEvent<'PurchaseNotPaid', { purchaseId: string; outcome: 'declined' | 'error'; reason: string }>;

/**
 * A sale made and paid entirely by a third-party reseller. `partnerId` (absent from the oldest
 * events) names, with the reference, the key its buyer is encrypted under.
 */
export type PurchaseResold = DomainEvent<
  'PurchaseResold',
  {
    purchaseId: string;
    partnerId?: string;
    transactionReference: string;
    transactionDate: string;
    amountCents: number;
    holdId: string;
    couponIds: string[];
    buyer: ResaleBuyer;
    resoldAt: string;
  }
>;

/**
 * The buyer of a reseller's sale was erased, asked by its partner or an operator: the key of the
 * sale's transaction is deleted, and every event that carried the buyer reads without it. The
 * sale, its coupons and amounts stay.
 */
export type ResaleBuyerErased = DomainEvent<
  'ResaleBuyerErased',
  { purchaseId: string; partnerId: string; transactionReference: string; by: 'partner' | 'operator'; erasedAt: string }
>;

/**
 * Money of some of the purchase's coupons to be given back: decided, its coupons held from
 * redemption, not yet paid back. `forced`: an operator refunds coupons the rules keep (redeemed,
 * expired, shipped), with the reason recorded.
 */
export type RefundRequested = DomainEvent<
  'RefundRequested',
  {
    refundId: string;
    purchaseId: string;
    partnerId: string;
    /** The purchase's buyer. */
    userId: string | null;
    couponIds: string[];
    amountCents: number;
    reason: RefundReason;
    note: string | null;
    forced: boolean;
    requestedAt: string;
  }
>;
/** The money went back: through the processor (`processorRefundId`), or the partner's own for a claimed reservation (null). */
export type RefundSucceeded = DomainEvent<
  'RefundSucceeded',
  { refundId: string; purchaseId: string; processorRefundId: string | null; settledAt: string }
>;
/** The processor refused the refund: nothing went back, and its coupons may be refunded again. */
export type RefundFailed = DomainEvent<'RefundFailed', { refundId: string; purchaseId: string; reason: string; settledAt: string }>;

/**
 * A gift's mail to its recipient was sent (`sent`), kept in the sandbox's outbox (`kept`), or
 * given up (`not_sent`: the recipient deleted or erased, the address refused), once.
 */
export type GiftMailed = DomainEvent<
  'GiftMailed',
  { purchaseId: string; outcome: 'sent' | 'kept' | 'not_sent'; reason: string | null; mailedAt: string }
>;

export type PurchaseEvent =
  | PurchaseReserved
  | PurchaseClaimed
  | PurchaseReleased
  | PurchasePaid
  | PurchaseNotPaid
  | PurchaseResold
  | ResaleBuyerErased
  | RefundRequested
  | RefundSucceeded
  | RefundFailed
  | GiftMailed;

export const purchaseStream = (purchaseId: string) => `purchase-${purchaseId}`;

/** Coupon ids of a purchase: derived, so a retried claim issues the same coupons, not new ones. */
export const couponIdsFor = (purchaseId: string, quantity: number) => Array.from({ length: quantity }, (_, i) => `${purchaseId}-${i + 1}`);
