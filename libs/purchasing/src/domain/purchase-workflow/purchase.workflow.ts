import { CannotFulfil, Declined, laterPosition, LogPosition, PaymentFailed, PaymentOutcomeUnknown, Workflow } from '@deals/kernel';
import { CHARGE_LOCK_MS } from '../charge-lock/charge-lock';
import { ForBuyer } from '../inventory/inventory.decider';
import { buyerKey, holdExpiry } from '../inventory/inventory.events';
import { ClaimPurchase, RecordPayment, RecordResale, ReservePurchase } from '../purchase/purchase.decider';
import { couponIdsFor, DealSnapshot } from '../purchase/purchase.events';
import type { ResaleTerms } from '../purchase/resale-claim';
import type { ShippingAddress } from '../purchase/shipping-address';
import { decideResaleStart, evolveResaleStart, ResaleRequested, ResaleStartCommand, ResaleStartInput } from './resale-start';

/**
 * The purchase, from its start to its answer, as one pure workflow: every way a purchase is paid
 * for (a stored card, a full purchase, the claim of a reservation, a reseller's sale) and the
 * settling of a card purchase a crash or a silent processor left open. Its inputs are what happens
 * to the purchase; its outputs the commands the deciders and ports take. `runWorkflow` carries them
 * out and feeds each result back; the handlers read the answer from the final state.
 *
 * A stored-card purchase takes the user's charge lock, records the purchase and holds its units at
 * once (one commit, usually); any refused undoes the others and answers the refusal. Then it
 * charges the card (idempotent by purchase id) and arms the hold's release; approved: ends the
 * lock and sells; declined or failed: ends the lock, releases the hold, records the non-payment;
 * no answer: keeps the lock and arms the settling at its end. A sale sells the held units (or
 * fresh ones when the hold lapsed), then records the payment and issues the coupons. Units gone
 * after the charge: refund, then record the non-payment. No charge without units, no units
 * without a charge. A reseller's new sale claims its transaction reference, holds, marks the claim
 * selling and reserves first (`resale-start.ts`); then it is sold as a claim is.
 */

type Caller = { partnerId: string };

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
/** A card purchase left reserved (a crash, a charge with no answer), to settle from the processor's record. */
export type CardPurchaseResumed = {
  type: 'CardPurchaseResumed';
  data: Caller & { purchaseId: string; dealId: string; userId: string; creditCardId: string; amountCents: number };
};

/** How a purchase's workflow starts (`ResaleStarted`: a resale whose purchase is written, to complete; `ResaleRequested`: a new one). */
export type PurchaseStarted = StoredCardPurchaseStarted | ReservationClaimStarted | ResaleStarted | ResaleRequested | CardPurchaseResumed;

type Nothing = Record<string, never>;

/** The outcome the processor recorded for a charge, as a look-up finds it (null: never charged). */
export type RecordedCharge = { status: 'approved'; chargeId: string } | { status: 'declined' | 'error'; reason: string } | null;

/** What happens to a purchase: how it starts, and what each command carried out led to. */
export type PurchaseWorkflowInput =
  | PurchaseStarted
  | { type: 'ChargeLockTaken'; data: Nothing }
  | { type: 'PurchaseReserved'; data: Nothing }
  | { type: 'UnitsHeld'; data: { expiresAt: string } }
  | { type: 'KeyedPurchaseEntered'; data: Nothing }
  | { type: 'HoldReleaseArmed'; data: Nothing }
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
  | { type: 'UnitsSold'; data: { holdId: string } }
  /** The units could not be sold: the hold lapsed or was released, and the deal sold out or went off sale. */
  | { type: 'UnitsGone'; data: { error: CannotFulfil } }
  | { type: 'SaleRecorded'; data: { position: LogPosition | null; couponIds: string[]; userId: string | null } }
  | { type: 'CouponsIssued'; data: { position: LogPosition | null } }
  | { type: 'ChargeRefunded'; data: Nothing }
  | { type: 'RefundFailed'; data: { reason: string } }
  | { type: 'HoldReleased'; data: Nothing }
  | { type: 'NonPaymentRecorded'; data: Nothing }
  | { type: 'ChargeLockEnded'; data: Nothing }
  | { type: 'Waited'; data: Nothing }
  /** A decider refused a command (a domain error, the answer to give). */
  | { type: 'StepRefused'; data: { step: Step; error: Error } }
  /** A command could not be carried out (a failed write, a store away). */
  | { type: 'StepFailed'; data: { step: Step; error: Error } }
  | ResaleStartInput;

/** What a sale records, but the hold it sold (known once sold). */
export type SaleRecord =
  | { kind: 'payment'; data: Omit<RecordPayment['data'], 'holdId'> }
  | { kind: 'claim'; data: Omit<ClaimPurchase['data'], 'holdId'> }
  | { kind: 'resale'; data: Omit<RecordResale['data'], 'holdId'> };

type Lock = { userId: string; purchaseId: string };

/** The commands the workflow asks for: the deciders' own, the gateway's and scheduler's, and a line for the log. */
export type PurchaseWorkflowCommand =
  | { type: 'BeginCharge'; data: Lock }
  | { type: 'EndCharge'; data: Lock }
  | ReservePurchase
  | { type: 'HoldUnits'; data: { dealId: string; holdId: string; quantity: number } & ForBuyer }
  | { type: 'StartKeyedPurchase'; data: { keyId: string; purchaseId: string; attempt: number } }
  | { type: 'ReleaseHold'; data: { dealId: string; holdId: string; reason: 'refused' | 'payment_failed' } }
  | { type: 'RecordNonPayment'; data: Caller & { purchaseId: string; outcome: 'declined' | 'error'; reason: string } }
  | { type: 'ArmHoldRelease'; data: { dealId: string; holdId: string; at: string } }
  | { type: 'DisarmHoldRelease'; data: { holdId: string } }
  /** A head start on the coupons' images (their codes derive from the purchase), so that the answer rarely waits for them. */
  | { type: 'DrawCouponImages'; data: { purchaseId: string; quantity: number } }
  | { type: 'Charge'; data: { purchaseId: string; cardToken: string; amountCents: number; description: string } }
  | { type: 'ArmRecovery'; data: { purchaseId: string; at: string } }
  | { type: 'LookUpCharge'; data: { purchaseId: string } }
  | { type: 'LookUpRefund'; data: { purchaseId: string } }
  | { type: 'ReadPurchase'; data: { purchaseId: string } }
  /** Sells the held units, or, when the hold lapsed or was released, fresh ones while the deal is on sale. */
  | { type: 'SellUnits'; data: { purchaseId: string; dealId: string; holdId: string; quantity: number } & ForBuyer }
  | { type: 'RecordSale'; data: SaleRecord & { holdId: string } }
  | { type: 'IssueCoupons'; data: Caller & { purchaseId: string; deal: DealSnapshot; couponIds: string[]; userId: string | null } }
  | { type: 'Refund'; data: { purchaseId: string; chargeId: string; amountCents: number } }
  | { type: 'Wait'; data: { ms: number } }
  | { type: 'Report'; data: { level: 'warn' | 'error'; message: string } }
  | ResaleStartCommand;

type Step = PurchaseWorkflowCommand['type'];

/** The answer: sold (with the log position it waits for), refused or failed (the error to give), or what a settling did. */
export type PurchaseAnswer =
  | { outcome: 'sold'; purchaseId: string; position: LogPosition | null }
  | { outcome: 'refused'; error: Error }
  | { outcome: 'failed'; error: Error }
  | { outcome: 'settled'; purchaseId: string; summary: string };

/** How many times the sale of a charged card purchase is tried again from what was written, after a failed write. */
export const SALE_ATTEMPTS = 3;

export const SOLD_OUT_DURING_CHARGE = 'sold out during the charge; the charge was refunded';

/** What a purchase is, once started: fixed but for what a read of its stream or its charge adds. */
export interface PurchaseOrder {
  path: 'stored_card' | 'claim' | 'resale' | 'resumed';
  purchaseId: string;
  partnerId: string;
  userId: string | null;
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

/** A stored-card purchase's start: its writes awaited, those done (to undo on a refusal), and its refusals. */
export interface StartProgress {
  /** Commands whose results the next decision waits for (the start's writes; then the charge and its hold's release job). */
  awaiting: readonly Step[];
  lockTaken: boolean;
  reserved: boolean;
  holdExpiresAt: string | null;
  /** Once all the start's writes answered with one, what was written is undone. */
  refusals: ReadonlyArray<{ step: Step; error: Error }>;
}

/** The sale: its steps under way, the first failed write among them, its tries from what was written, and what it wrote. */
export interface SaleProgress {
  steps: number;
  failure: Error | null;
  attempts: number;
  /** A try is due (decided next). */
  retryDue: boolean;
  /** The units were gone (the error, for the answer). */
  unitsGone: CannotFulfil | null;
  recorded: { position: LogPosition | null } | null;
  issued: { position: LogPosition | null } | null;
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
  holdReleased: boolean;
  nonPaymentRecorded: boolean;
  /** When a charge with no answer is settled (its recovery job's time). */
  settleAt: string | null;
  answer: PurchaseAnswer | null;
}

type Input = PurchaseWorkflowInput;
type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;

const command = <T extends Step>(type: T, data: Extract<Command, { type: T }>['data']) => ({ type, data }) as Extract<Command, { type: T }>;

/** The start's writes, in the order their refusals are told (the lock's `already_charging` first). */
const START: readonly Step[] = ['BeginCharge', 'ReservePurchase', 'HoldUnits', 'StartKeyedPurchase'];
/** The sale's steps a failed write of which is tried again, for a charged card purchase. */
const SALE: readonly Step[] = ['ReadPurchase', 'SellUnits', 'RecordSale', 'IssueCoupons'];

const charged = (state: State) => state.charge?.status === 'approved';
const lock = (state: State): Lock => ({ userId: state.order.userId!, purchaseId: state.order.purchaseId });
/** Whether the sale is written the quick way: the payment and the coupons together (a card purchase charged a moment ago, first try). */
const quickSale = (state: State) => state.order.path === 'stored_card' && state.sale.attempts === 0;

function firstRefusal(refusals: StartProgress['refusals']): Error {
  return [...refusals].sort((a, b) => START.indexOf(a.step) - START.indexOf(b.step))[0].error;
}

/** Once the start's writes all answered: the charge, or (one was refused) the undo of the others. */
function afterStart(state: State): Command[] {
  if (state.start.awaiting.some((step) => START.includes(step))) return [];
  if (state.start.refusals.length) {
    const reason = `refused before charging: ${firstRefusal(state.start.refusals).message}`;
    const undo: Command[] = [];
    if (state.start.lockTaken) undo.push(command('EndCharge', lock(state)));
    if (state.start.reserved)
      undo.push(
        command('RecordNonPayment', { purchaseId: state.order.purchaseId, partnerId: state.order.partnerId, outcome: 'error', reason }),
      );
    if (state.start.holdExpiresAt !== null)
      undo.push(command('ReleaseHold', { dealId: state.order.dealId, holdId: state.order.purchaseId, reason: 'refused' }));
    return undo;
  }
  // The coupons' images are drawn on their thread while the card is charged, not after the sale.
  return [
    command('DrawCouponImages', { purchaseId: state.order.purchaseId, quantity: state.order.quantity }),
    command('Charge', {
      purchaseId: state.order.purchaseId,
      cardToken: state.order.cardToken,
      amountCents: state.order.amountCents,
      description: `deal ${state.order.dealId} x${state.order.quantity}`,
    }),
    command('ArmHoldRelease', { dealId: state.order.dealId, holdId: state.order.purchaseId, at: state.start.holdExpiresAt! }),
  ];
}

/** Once the charge answered (and its hold's release job was armed): sell, give the units back, or wait for the settling. */
function afterCharge(state: State, now: Date): Command[] {
  if (state.start.awaiting.length || !state.charge) return [];
  const charge = state.charge;
  if (charge.status === 'approved') return [command('EndCharge', lock(state)), sell(state, state.order.purchaseId)];
  // Kept locked to its settling: a retry meanwhile answers 409 already_charging instead of perhaps charging twice.
  if (charge.status === 'unanswered')
    return [command('ArmRecovery', { purchaseId: state.order.purchaseId, at: new Date(now.getTime() + CHARGE_LOCK_MS).toISOString() })];
  return [
    command('EndCharge', lock(state)),
    command('ReleaseHold', { dealId: state.order.dealId, holdId: state.order.purchaseId, reason: 'payment_failed' }),
    command('RecordNonPayment', nonPayment(state)),
    command('DisarmHoldRelease', { holdId: state.order.purchaseId }),
  ];
}

function sell(state: State, holdId: string): Command {
  return command('SellUnits', {
    purchaseId: state.order.purchaseId,
    dealId: state.order.dealId,
    holdId,
    quantity: state.order.quantity,
    ...state.order.buyer,
  });
}

/** The units sold: the sale recorded, and its coupons issued (beside it the quick way, else after it). */
function afterSold(state: State, holdId: string): Command[] {
  const record = { ...state.order.record!, holdId } as Extract<Command, { type: 'RecordSale' }>['data'];
  const commands: Command[] = [command('RecordSale', record)];
  if (quickSale(state)) commands.push(issue(state, couponIdsFor(state.order.purchaseId, state.order.quantity), state.order.userId));
  commands.push(command('DisarmHoldRelease', { holdId: state.order.purchaseId }));
  return commands;
}

function issue(state: State, couponIds: string[], userId: string | null): Command {
  return command('IssueCoupons', {
    purchaseId: state.order.purchaseId,
    partnerId: state.order.partnerId,
    deal: state.order.deal!,
    couponIds,
    userId,
  });
}

/** The non-payment a purchase records: its charge's refusal, or a refund of a charge whose units were gone. */
function nonPayment(state: State): Extract<Command, { type: 'RecordNonPayment' }>['data'] {
  const { purchaseId, partnerId } = state.order;
  const { charge } = state;
  if (state.refunded) return { purchaseId, partnerId, outcome: 'error', reason: SOLD_OUT_DURING_CHARGE };
  if (charge?.status === 'declined') return { purchaseId, partnerId, outcome: 'declined', reason: charge.reason };
  if (charge?.status === 'error') return { purchaseId, partnerId, outcome: 'error', reason: charge.reason };
  return { purchaseId, partnerId, outcome: 'error', reason: 'interrupted before charging' };
}

/** A settling's last step: the user's charge lock, if it still names this purchase, ends now rather than when it lapses. */
function afterSettled(state: State): Command[] {
  return [command('EndCharge', lock(state))];
}

/** What a settling did, for the log. */
function settlingSummary(state: State): string {
  const { charge } = state;
  if (charge?.status !== 'approved') return charge?.status === 'never' || !charge ? 'never charged' : charge.status;
  if (state.sale.unitsGone) return 'approved, but sold out meanwhile: refunded';
  if (state.refunded) return 'refunded before the crash';
  return 'approved; sold and coupons issued';
}

/** What follows a step's refusal or failure (most end the purchase with that error, see `evolve`). */
function afterTrouble(state: State, input: Extract<Input, { type: 'StepRefused' | 'StepFailed' }>): Command[] {
  const { step, error } = input.data;
  if (state.start.refusals.some((refusal) => refusal.error === error)) return afterStart(state);
  const undoing = state.start.refusals.length > 0;
  if (step === 'EndCharge' && state.order.path !== 'resumed')
    return [report(`purchase ${state.order.purchaseId}: its charge lock could not be ended (${error.message}); it lapses by itself`)];
  if (undoing && (step === 'EndCharge' || step === 'RecordNonPayment' || step === 'ReleaseHold')) {
    // An undo that fails must not hide the refusal: what it leaves ends by itself (the lock after
    // CHARGE_LOCK_MS, the purchase at recovery, the hold at its expiry, its job armed now).
    const lapse =
      step === 'ReleaseHold'
        ? [command('ArmHoldRelease', { dealId: state.order.dealId, holdId: state.order.purchaseId, at: state.start.holdExpiresAt! })]
        : [];
    return [report(`purchase ${state.order.purchaseId} was refused, and undoing one of its writes failed: ${error.message}`), ...lapse];
  }
  return [];
}

const report = (message: string) => command('Report', { level: 'error', message });

export const purchaseWorkflow: Workflow<Input, State, Command> = {
  initialState: () => ({
    order: NO_ORDER,
    start: { awaiting: [], lockTaken: false, reserved: false, holdExpiresAt: null, refusals: [] },
    charge: null,
    sale: { steps: 0, failure: null, attempts: 0, retryDue: false, unitsGone: null, recorded: null, issued: null },
    refunded: false,
    holdReleased: false,
    nonPaymentRecorded: false,
    settleAt: null,
    answer: null,
  }),

  decide(input, state, now) {
    // The card is charged: a failed write must not leave it without its units and coupons. The
    // sale is tried again from what was written (every step is idempotent), at once and then after
    // a short wait; what still fails is finished by recovery at the next start.
    if (state.sale.retryDue)
      return state.sale.attempts === 1
        ? [command('ReadPurchase', { purchaseId: state.order.purchaseId })]
        : [command('Wait', { ms: 50 * (state.sale.attempts - 1) })];
    switch (input.type) {
      case 'StoredCardPurchaseStarted': {
        const { purchaseId, partnerId, userId, creditCardId, sessionId, deal, quantity, shipping, keyed } = input.data;
        const start: Command[] = [
          command('BeginCharge', { userId, purchaseId }),
          {
            type: 'ReservePurchase',
            data: {
              purchaseId,
              partnerId,
              deal,
              quantity,
              holdId: purchaseId,
              reservedAt: now.toISOString(),
              holdExpiresAt: new Date(holdExpiry(now.getTime())).toISOString(),
              payment: { userId, creditCardId, sessionId },
              ...(shipping ? { shipping } : {}),
            },
          },
          command('HoldUnits', { dealId: deal.dealId, holdId: purchaseId, quantity, ...state.order.buyer }),
        ];
        if (keyed) start.push(command('StartKeyedPurchase', { keyId: keyed.keyId, purchaseId, attempt: keyed.attempt }));
        return start;
      }
      case 'ReservationClaimStarted':
      case 'ResaleStarted':
        return [command('ReadPurchase', { purchaseId: input.data.purchaseId })];
      case 'CardPurchaseResumed':
        return [command('LookUpCharge', { purchaseId: input.data.purchaseId })];
      case 'ChargeLockTaken':
      case 'PurchaseReserved':
      case 'UnitsHeld':
      case 'KeyedPurchaseEntered':
        return afterStart(state);
      case 'HoldReleaseArmed':
      case 'ChargeApproved':
      case 'ChargeDeclined':
      case 'ChargeFailed':
      case 'ChargeUnanswered':
        return afterCharge(state, now);
      case 'RecoveryArmed':
        return [
          report(
            `purchase ${state.order.purchaseId}: the processor did not answer its charge (${(state.charge as { reason: string }).reason}); ${
              input.data.armed ? `settled at ${state.settleAt}` : 'settled at the next start'
            }`,
          ),
        ];
      case 'ChargeLookedUp':
        if (charged(state)) return [command('LookUpRefund', { purchaseId: state.order.purchaseId })];
        return [command('ReleaseHold', { dealId: state.order.dealId, holdId: state.order.purchaseId, reason: 'payment_failed' })];
      case 'RefundLookedUp':
        // Refunded before the crash (its units could not be sold): closed, never sold.
        if (state.refunded)
          return [command('ReleaseHold', { dealId: state.order.dealId, holdId: state.order.purchaseId, reason: 'payment_failed' })];
        return [command('ReadPurchase', { purchaseId: state.order.purchaseId })];
      case 'PurchaseRead': {
        const { sold, holdId } = input.data;
        const images = command('DrawCouponImages', { purchaseId: state.order.purchaseId, quantity: state.order.quantity });
        return [images, ...(sold ? afterSold(state, sold.holdId) : [sell(state, holdId)])];
      }
      case 'UnitsSold':
        return afterSold(state, input.data.holdId);
      case 'UnitsGone':
        // Charged, and no units to sell: the money goes back. Not charged (a claim, a resale): refused.
        if (charged(state)) {
          const { chargeId } = state.charge as { chargeId: string };
          return [command('Refund', { purchaseId: state.order.purchaseId, chargeId, amountCents: state.order.amountCents })];
        }
        return [];
      case 'ChargeRefunded':
        return [command('RecordNonPayment', nonPayment(state))];
      case 'SaleRecorded':
        return quickSale(state) ? [] : [issue(state, input.data.couponIds, input.data.userId)];
      case 'CouponsIssued':
        return state.answer?.outcome === 'sold' && state.order.path === 'resumed' ? afterSettled(state) : [];
      case 'HoldReleased':
        if (state.order.path !== 'resumed') return [];
        return state.nonPaymentRecorded ? afterSettled(state) : [command('RecordNonPayment', nonPayment(state))];
      case 'NonPaymentRecorded':
        if (state.order.path !== 'resumed') return [];
        return state.holdReleased
          ? afterSettled(state)
          : [command('ReleaseHold', { dealId: state.order.dealId, holdId: state.order.purchaseId, reason: 'payment_failed' })];
      case 'Waited':
        return [command('ReadPurchase', { purchaseId: state.order.purchaseId })];
      case 'StepRefused':
      case 'StepFailed':
        return afterTrouble(state, input);
      case 'ResaleRequested':
      case 'ReferenceClaimed':
      case 'ReferenceClaimedBefore':
      case 'ResaleDealChecked':
      case 'ResaleUnitsHeld':
      case 'ResaleUnitsRefused':
      case 'ResaleMarkedSelling':
      case 'ReferenceClaimSuperseded':
      case 'ReferenceGivenUp':
      case 'ResaleReserved':
        return decideResaleStart(input, state, now);
      default:
        return [];
    }
  },

  evolve(state, message) {
    switch (message.type) {
      case 'StoredCardPurchaseStarted': {
        const d = message.data;
        const { purchaseId, partnerId, userId } = d;
        return {
          ...state,
          order: {
            path: 'stored_card',
            purchaseId,
            partnerId,
            userId,
            dealId: d.deal.dealId,
            quantity: d.quantity,
            deal: d.deal,
            buyer: { buyer: buyerKey(partnerId, userId), maxPerBuyer: d.maxPerUser },
            cardToken: d.cardToken,
            amountCents: d.deal.unitPrice * d.quantity,
            record: {
              kind: 'payment',
              data: { purchaseId, partnerId, userId, creditCardId: d.creditCardId, chargeId: '', sessionId: d.sessionId },
            },
          },
          // The start's writes, awaited together.
          start: { ...state.start, awaiting: d.keyed ? START : START.slice(0, 3) },
        };
      }
      case 'ReservationClaimStarted': {
        const { purchaseId, partnerId, userId, maxPerUser } = message.data;
        return {
          ...state,
          order: {
            ...NO_ORDER,
            path: 'claim',
            purchaseId,
            partnerId,
            userId,
            buyer: { buyer: buyerKey(partnerId, userId), maxPerBuyer: maxPerUser },
            record: { kind: 'claim', data: { purchaseId, partnerId, userId } },
          },
        };
      }
      case 'ResaleStarted': {
        const { purchaseId, partnerId, transactionReference, terms } = message.data;
        const { transactionDate, amountCents, buyer } = terms;
        return {
          ...state,
          order: {
            ...NO_ORDER,
            path: 'resale',
            purchaseId,
            partnerId,
            record: { kind: 'resale', data: { purchaseId, partnerId, transactionReference, transactionDate, amountCents, buyer } },
          },
        };
      }
      case 'CardPurchaseResumed': {
        const { purchaseId, partnerId, userId, dealId, amountCents, creditCardId } = message.data;
        return {
          ...state,
          order: {
            ...NO_ORDER,
            path: 'resumed',
            purchaseId,
            partnerId,
            userId,
            dealId,
            amountCents,
            // The limit is not applied again: it was when the charged hold was taken.
            buyer: { buyer: buyerKey(partnerId, userId) },
            record: { kind: 'payment', data: { purchaseId, partnerId, userId, creditCardId, chargeId: '', sessionId: null } },
          },
        };
      }
      case 'ChargeLockTaken':
        return startAnswered(state, 'BeginCharge', { lockTaken: true });
      case 'PurchaseReserved':
        return startAnswered(state, 'ReservePurchase', { reserved: true });
      case 'UnitsHeld':
        return startAnswered(state, 'HoldUnits', { holdExpiresAt: message.data.expiresAt });
      case 'KeyedPurchaseEntered':
        return startAnswered(state, 'StartKeyedPurchase', {});
      case 'HoldReleaseArmed':
        return startAnswered(state, 'ArmHoldRelease', {});
      case 'ChargeApproved':
        return approved(startAnswered(state, 'Charge', {}), message.data.chargeId);
      case 'ChargeDeclined':
        return {
          ...startAnswered(state, 'Charge', {}),
          charge: { status: 'declined', reason: message.data.reason },
          answer: { outcome: 'refused', error: new Declined(`the card was declined: ${message.data.reason}`) },
        };
      case 'ChargeFailed':
        return {
          ...startAnswered(state, 'Charge', {}),
          charge: { status: 'error', reason: message.data.reason },
          answer: { outcome: 'refused', error: new PaymentFailed('the payment processor failed; nothing was charged') },
        };
      case 'ChargeUnanswered':
        return {
          ...startAnswered(state, 'Charge', {}),
          charge: { status: 'unanswered', reason: message.data.reason },
          answer: {
            outcome: 'refused',
            error: new PaymentOutcomeUnknown(
              `the payment processor did not answer; the purchase is settled from its record within ${CHARGE_LOCK_MS / 60_000} minutes: fulfilled if the card was charged, released if not`,
              state.order.purchaseId,
            ),
          },
        };
      case 'ChargeLookedUp': {
        const { charge } = message.data;
        if (charge === null) return { ...state, charge: { status: 'never' } };
        if (charge.status === 'approved') return approved(state, charge.chargeId);
        return { ...state, charge };
      }
      case 'RefundLookedUp':
        return { ...state, refunded: message.data.refunded };
      case 'PurchaseRead': {
        const { deal, quantity } = message.data;
        return { ...saleStepDone(state, {}), order: { ...state.order, deal, dealId: deal.dealId, quantity } };
      }
      case 'UnitsSold':
        return saleStepDone(state, {});
      case 'UnitsGone': {
        const { error } = message.data;
        const next = saleStepDone(state, { unitsGone: error });
        return charged(state) ? next : { ...next, answer: { outcome: 'refused', error } };
      }
      case 'ChargeRefunded':
        return { ...state, refunded: true };
      case 'RefundFailed':
        return {
          ...state,
          answer: {
            outcome: 'failed',
            error: new Error(`purchase ${state.order.purchaseId}: the refund of its unfulfilled charge failed (${message.data.reason})`),
          },
        };
      case 'NonPaymentRecorded': {
        const next = { ...state, nonPaymentRecorded: true };
        // The charge of units that were gone, refunded and recorded: the card purchase answers that they were gone.
        const { unitsGone } = state.sale;
        return state.order.path === 'stored_card' && unitsGone ? { ...next, answer: { outcome: 'refused', error: unitsGone } } : next;
      }
      case 'HoldReleased':
        return { ...state, holdReleased: true };
      case 'SaleRecorded':
        return sold(saleStepDone(state, { recorded: { position: message.data.position } }));
      case 'CouponsIssued':
        return sold(saleStepDone(state, { issued: { position: message.data.position } }));
      case 'ChargeLockEnded':
        // A settling's last step: what it did is its answer.
        return state.order.path === 'resumed' && (state.answer === null || state.answer.outcome === 'sold')
          ? { ...state, answer: { outcome: 'settled', purchaseId: state.order.purchaseId, summary: settlingSummary(state) } }
          : state;
      case 'StepRefused':
      case 'StepFailed':
        return troubled(state, message);
      // Commands decided that the state follows: the sale's steps under way, the settling's time.
      case 'ReadPurchase':
        return { ...state, sale: { ...state.sale, steps: state.sale.steps + 1, recorded: null, issued: null, retryDue: false } };
      case 'SellUnits':
      case 'RecordSale':
      case 'IssueCoupons':
        return { ...state, sale: { ...state.sale, steps: state.sale.steps + 1 } };
      case 'Wait':
        return { ...state, sale: { ...state.sale, retryDue: false } };
      case 'ArmRecovery':
        return { ...state, settleAt: message.data.at };
      case 'ResaleRequested':
      case 'ReferenceClaimed':
      case 'ReferenceClaimedBefore':
      case 'ResaleDealChecked':
      case 'ResaleUnitsRefused':
      case 'ReferenceClaimSuperseded':
        return evolveResaleStart(state, message);
      default:
        return state;
    }
  },
};

/** An order not started yet. */
const NO_ORDER: PurchaseOrder = {
  path: 'stored_card',
  purchaseId: '',
  partnerId: '',
  userId: null,
  dealId: '',
  quantity: 0,
  deal: null,
  buyer: {},
  cardToken: '',
  amountCents: 0,
  record: { kind: 'claim', data: { purchaseId: '', partnerId: '', userId: '' } },
};

/**
 * One awaited write of the start (or the charge, or its hold's release job) answered. Once all the
 * start's did: the charge and the release job are awaited next, or, if one was refused, the first
 * refusal is the answer (and what was written is undone).
 */
function startAnswered(state: State, step: Step, change: Partial<StartProgress>): State {
  if (!state.start.awaiting.includes(step)) return state;
  const awaiting = state.start.awaiting.filter((awaited) => awaited !== step);
  const start = { ...state.start, ...change, awaiting };
  if (awaiting.length || !START.includes(step)) return { ...state, start };
  if (start.refusals.length) return { ...state, start, answer: { outcome: 'refused', error: firstRefusal(start.refusals) } };
  return { ...state, start: { ...start, awaiting: CHARGING } };
}

const CHARGING: readonly Step[] = ['Charge', 'ArmHoldRelease'];

/**
 * One of the sale's steps answered. Once none of a try is under way and one of them failed to
 * write: the sale is tried again from what was written, or, past its tries, fails with that error.
 */
function saleStepDone(state: State, change: Partial<SaleProgress>): State {
  const sale = { ...state.sale, ...change, steps: state.sale.steps - 1 };
  if (sale.steps > 0 || !sale.failure) return { ...state, sale };
  if (sale.attempts < SALE_ATTEMPTS) return { ...state, sale: { ...sale, failure: null, attempts: sale.attempts + 1, retryDue: true } };
  return { ...state, sale, answer: { outcome: 'failed', error: sale.failure } };
}

function approved(state: State, chargeId: string): State {
  const record = state.order.record as Extract<SaleRecord, { kind: 'payment' }>;
  return {
    ...state,
    charge: { status: 'approved', chargeId },
    order: { ...state.order, record: { ...record, data: { ...record.data, chargeId } } },
  };
}

/** Recorded and its coupons issued: sold. */
function sold(state: State): State {
  const { recorded, issued } = state.sale;
  if (!recorded || !issued) return state;
  return {
    ...state,
    answer: { outcome: 'sold', purchaseId: state.order.purchaseId, position: laterPosition(recorded.position, issued.position) },
  };
}

/** A step refused or failed: the start's refusals are gathered; a charged sale's failed write is tried again; the rest end the purchase with its error. */
function troubled(state: State, input: Extract<Input, { type: 'StepRefused' | 'StepFailed' }>): State {
  const { step, error } = input.data;
  if (START.includes(step) && state.start.awaiting.includes(step))
    return startAnswered({ ...state, start: { ...state.start, refusals: [...state.start.refusals, { step, error }] } }, step, {});
  if (step === 'EndCharge' && state.order.path !== 'resumed') return state;
  if (state.start.refusals.length && (step === 'EndCharge' || step === 'RecordNonPayment' || step === 'ReleaseHold')) return state;
  // The card is charged: a failed write of its sale is tried again (see `saleStepDone`).
  if (input.type === 'StepFailed' && charged(state) && state.order.path === 'stored_card' && SALE.includes(step))
    return saleStepDone(state, { failure: state.sale.failure ?? error });
  const next = SALE.includes(step) ? saleStepDone(state, {}) : state;
  return { ...next, answer: { outcome: input.type === 'StepRefused' ? 'refused' : 'failed', error } };
}
