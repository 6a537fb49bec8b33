import type { CannotFulfil, LogPosition } from '@deals/kernel';
import type { ForBuyer } from '../inventory/inventory.decider';
import type { ClaimPurchase, RecordPayment, RecordResale, ReservePurchase } from '../purchase/purchase.decider';
import type { DealSnapshot, PurchaseEvent, PurchaseGift } from '../purchase/purchase.events';
import type { ResaleTerms } from '../purchase/resale-claim';
import type { ShippingAddress } from '../purchase/shipping-address';
import type { ResaleRequested, ResaleStartCommand, ResaleStartInput } from './resale-start.types';

/** The purchase workflow's inputs, commands and state (`purchase.workflow.ts`). */

export type Caller = { partnerId: string };

/** `buyer` and its per-user limit, for the inventory (see `ForBuyer`). */
export type Buyer = ForBuyer;

export type StoredCardPurchaseStarted = {
  type: 'StoredCardPurchaseStarted';
  data: Caller & {
    purchaseId: string;
    userId: string;
    creditCardId: string;
    /** The processor's token of the card (never logged, never in the log). */
    cardToken: string;
    sessionId: string | null;
    deal: DealSnapshot;
    quantity: number;
    maxPerUser: number | undefined;
    shipping: ShippingAddress | null;
    /** Bought for someone else, who holds the coupons (`userId` pays); null or absent: for the buyer. */
    gift?: PurchaseGift | null;
    /** The purchase's place among its `Idempotency-Key`'s purchases; null without a key. */
    keyed: { keyId: string; attempt: number } | null;
  };
};
export type ReservationClaimStarted = {
  type: 'ReservationClaimStarted';
  data: Caller & { purchaseId: string; userId: string; maxPerUser: number | undefined };
};
export type ResaleStarted = {
  type: 'ResaleStarted';
  data: Caller & { purchaseId: string; transactionReference: string; terms: ResaleTerms };
};
/**
 * A card purchase to settle (left open by a crash or a charge with no answer): its stream as written,
 * which the workflow folds into its state before deciding its next step from the processor's record.
 */
export type SettlingStarted = {
  type: 'SettlingStarted';
  data: { purchaseId: string; history: readonly PurchaseEvent[] };
};

/** How a purchase's workflow starts (`ResaleStarted`: a resale whose purchase is written, to complete; `ResaleRequested`: a new one). */
export type PurchaseStarted = StoredCardPurchaseStarted | ReservationClaimStarted | ResaleStarted | ResaleRequested | SettlingStarted;

export type Nothing = Record<string, never>;

/** The outcome the processor recorded for a charge, as a look-up finds it (null: never charged). */
export type RecordedCharge = { status: 'approved'; chargeId: string } | { status: 'declined' | 'error'; reason: string } | null;

/** What happens to a purchase: how it starts, and what each command carried out led to. */
export type PurchaseWorkflowInput =
  | PurchaseStarted
  /** The start's unit written: the lock taken, the purchase reserved, its units held. */
  | { type: 'PurchaseStartWritten'; data: Nothing }
  | { type: 'ChargeApproved'; data: { chargeId: string } }
  | { type: 'ChargeDeclined'; data: { reason: string } }
  | { type: 'ChargeFailed'; data: { reason: string } }
  /** No answer from the processor (a dropped connection, a timeout): the card may have been charged. */
  | { type: 'ChargeUnanswered'; data: { reason: string } }
  | { type: 'RecoveryArmed'; data: { armed: boolean } }
  | { type: 'ChargeLookedUp'; data: { charge: RecordedCharge } }
  | { type: 'RefundLookedUp'; data: { refunded: boolean } }
  | {
      type: 'PurchaseRead';
      data: {
        deal: DealSnapshot;
        quantity: number;
        holdId: string;
        /** The sale recorded already (a run before this one got that far), or null. */
        sold: { holdId: string; couponIds: string[]; userId: string | null } | null;
      };
    }
  /** The sale's unit refused, nothing written: the hold it sold lapsed or was released (`HoldLapsed`). */
  | { type: 'HoldLapsed'; data: { error: CannotFulfil } }
  /** The sale's unit refused, nothing written: no units to sell (sold out, off sale, the per-user limit). */
  | { type: 'UnitsGone'; data: { error: CannotFulfil } }
  /** The sale's unit written: sold, recorded, its coupons issued (and a card purchase's lock ended), at `position`. */
  | { type: 'SaleWritten'; data: { position: LogPosition | null } }
  | { type: 'ChargeRefunded'; data: Nothing }
  | { type: 'RefundFailed'; data: { reason: string } }
  /** The start undone in one unit: the lock ended, the units given back, the non-payment recorded. */
  | { type: 'StartUndone'; data: Nothing }
  | { type: 'Waited'; data: Nothing }
  /** A decider refused a command (a domain error, the answer to give). */
  | { type: 'StepRefused'; data: { step: Step; error: Error } }
  /** A command could not be carried out (a failed write, a store away); `at`: when (ms since the epoch). */
  | { type: 'StepFailed'; data: { step: Step; error: Error; at?: number } }
  | ResaleStartInput;

/** What a sale records, but the hold it sold (known once sold). */
export type SaleRecord =
  | { kind: 'payment'; data: Omit<RecordPayment['data'], 'holdId'> }
  | { kind: 'claim'; data: Omit<ClaimPurchase['data'], 'holdId'> }
  | { kind: 'resale'; data: Omit<RecordResale['data'], 'holdId'> };

export type Lock = { userId: string; purchaseId: string };

/** What a purchase never paid for records: its charge's refusal, or a refund of a charge whose units were gone. */
export type NonPayment = Caller & { purchaseId: string; outcome: 'declined' | 'error'; reason: string };

/**
 * The units a sale sells (the buyer's counted against the per-user limit where their hold did not
 * count them): the hold `holdId`; or, `fresh`, units held and sold under `holdId` in the sale's own
 * unit (`replacementHoldId`, the purchase's hold having lapsed or been released), only while the
 * deal is on sale, a sandbox's from its own inventory (a hold taken already is sold as it is).
 */
export type SaleUnits = { purchaseId: string; dealId: string; holdId: string; quantity: number; fresh?: true } & ForBuyer;

/** What `FinishSale` writes. `recorded`: the purchase shows the sale recorded (a retry's unit, to complete). */
export type SaleUnit = {
  units: SaleUnits;
  record: SaleRecord & { holdId: string };
  issue: IssueCouponsData;
  endCharge: Lock | null;
  recorded?: true;
};

/** The coupons a sale issues: those its record names, for its user. */
export type IssueCouponsData = Caller & { purchaseId: string; deal: DealSnapshot; couponIds: string[]; userId: string | null };

/** The commands the workflow asks for: the deciders' own, the gateway's and scheduler's, and a line for the log. */
export type PurchaseWorkflowCommand =
  /**
   * A stored-card purchase's start, one unit of work: the user's charge lock taken, the purchase
   * reserved, its units held, and its place among its `Idempotency-Key`'s purchases (null: no key).
   */
  | {
      type: 'StartPurchase';
      data: {
        lock: Lock;
        reserve: ReservePurchase['data'];
        hold: { dealId: string; holdId: string; quantity: number } & ForBuyer;
        keyed: { keyId: string; attempt: number } | null;
      };
    }
  /**
   * A card purchase's start undone, one unit of work: the user's charge lock ended, its held units
   * given back and its non-payment recorded (each a no-op where done already).
   */
  | {
      type: 'UndoStart';
      data: { lock: Lock; hold: { dealId: string; holdId: string }; nonPayment: NonPayment };
    }
  /** A head start on the coupons' images (their codes derive from the purchase), so that the answer rarely waits for them. */
  | { type: 'DrawCouponImages'; data: { purchaseId: string; quantity: number } }
  | { type: 'Charge'; data: { purchaseId: string; cardToken: string; amountCents: number; description: string } }
  | { type: 'ArmRecovery'; data: { purchaseId: string; at: string } }
  | { type: 'LookUpCharge'; data: { purchaseId: string } }
  | { type: 'LookUpRefund'; data: { purchaseId: string } }
  | { type: 'ReadPurchase'; data: { purchaseId: string } }
  /**
   * The sale, one unit of work: its units sold, the sale recorded, its coupons issued and (a card
   * purchase's, `endCharge`) the user's charge lock ended, all or none; a claim's or a resale's
   * line dated now with it. Each part changes nothing where it is written already (a retry).
   */
  | { type: 'FinishSale'; data: SaleUnit }
  | { type: 'Refund'; data: { purchaseId: string; chargeId: string; amountCents: number } }
  | { type: 'Wait'; data: { ms: number } }
  | { type: 'Report'; data: { level: 'warn' | 'error'; message: string } }
  | ResaleStartCommand;

export type Step = PurchaseWorkflowCommand['type'];

/** The answer: sold (with the log position it waits for), refused or failed (the error to give), or what a settling did. */
export type PurchaseAnswer =
  | { outcome: 'sold'; purchaseId: string; position: LogPosition | null }
  | { outcome: 'refused'; error: Error }
  | { outcome: 'failed'; error: Error }
  | { outcome: 'settled'; purchaseId: string; summary: string };
export const SOLD_OUT_DURING_CHARGE = 'sold out during the charge; the charge was refunded';

/** What a purchase is, once started: fixed but for what a read of its stream or its charge adds. */
export interface PurchaseOrder {
  path: 'stored_card' | 'claim' | 'resale' | 'settling';
  purchaseId: string;
  partnerId: string;
  /** The buyer: the card's user (who pays, and whose charge lock it takes), the claiming user; null for a resale. */
  userId: string | null;
  /** Who holds the coupons, when not the buyer: a gift's recipient. */
  holder?: string;
  dealId: string;
  quantity: number;
  deal: DealSnapshot | null;
  buyer: ForBuyer;
  cardToken: string;
  amountCents: number;
  /** What its sale records, but the hold sold. */
  record: SaleRecord;
  /** A reseller's new sale: why its deal, as read before the claim, is not sold (null: it is). */
  resale?: { refusal: string | null };
}

/** A stored-card purchase's start: the commands awaited. */
export interface StartProgress {
  /** Commands whose results the next decision waits for (the start's write; then the charge). */
  awaiting: readonly Step[];
}

/** The sale: its steps under way, the first failed write among them, and its tries from what was written. */
export interface SaleProgress {
  steps: number;
  failure: Error | null;
  attempts: number;
  /** When the sale's first write failed (ms since the epoch), if it was told. */
  firstFailedAt: number | null;
  /** A try is due (decided next). */
  retryDue: boolean;
  /** The units were gone (the error, for the answer). */
  unitsGone: CannotFulfil | null;
  /** The try's unit sells fresh units (its hold lapsed): refused again, the units are gone. */
  fresh: boolean;
}

/** Kept in a few parts, each copied only when it changes (a state is copied at every step). */
export interface PurchaseWorkflowState {
  order: PurchaseOrder;
  start: StartProgress;
  charge:
    { status: 'approved'; chargeId: string } | { status: 'declined' | 'error' | 'unanswered'; reason: string } | { status: 'never' } | null;
  sale: SaleProgress;
  /** Whether the processor refunded the charge (asked by a settling, or done here). */
  refunded: boolean;
  /** The start undone (`UndoStart`): the lock ended, the units given back, the non-payment recorded. */
  undone: boolean;
  /** When a charge with no answer is settled (its recovery job's time). */
  settleAt: string | null;
  answer: PurchaseAnswer | null;
}

/** What `evolve` folds: the inputs, and the commands decided. */
export type PurchaseWorkflowMessage = PurchaseWorkflowInput | PurchaseWorkflowCommand;
