import type { CannotFulfil } from '@deals/kernel';
import { buyerKey, replacementHoldId } from '../inventory/inventory.events';
import { couponIdsFor } from '../purchase/purchase.events';
import { charged, command, lockEndedBySale, NO_ORDER, undoStart } from './purchase-workflow.common';
import type {
  PurchaseWorkflowCommand,
  PurchaseWorkflowInput,
  PurchaseWorkflowMessage,
  PurchaseWorkflowState,
  ReservationClaimStarted,
  ResaleStarted,
  SaleProgress,
  SaleUnit,
  Step,
} from './purchase-workflow.types';

/**
 * The sale every path shares once paid for (a card charged, a claim, a resale), one unit of work
 * (`FinishSale`): its units sold, the sale recorded, its coupons issued and a card purchase's charge
 * lock ended, all or none. Its hold lapsed or was released: the same unit again on fresh units,
 * held and sold in it under the purchase's replacement hold. A claim and a resale whose purchase is
 * written start here, from what was written; a purchase that shows its sale recorded (a retry)
 * writes the same unit again, which writes nothing where all of it is written (and completes what a
 * store that appends stream by stream left out). Units gone after a charge: refund, then the start
 * undone; nothing charged: refused. A charged card purchase's failed write is tried again from what
 * was written (see `saleStepDone`).
 */

type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;

type SaleInput = Extract<
  PurchaseWorkflowInput,
  {
    type:
      | 'ReservationClaimStarted'
      | 'ResaleStarted'
      | 'PurchaseRead'
      | 'HoldLapsed'
      | 'UnitsGone'
      | 'ChargeRefunded'
      | 'SaleWritten'
      | 'Waited';
  }
>;
type SaleMessage =
  | Exclude<SaleInput, { type: 'Waited' }>
  | Extract<PurchaseWorkflowInput, { type: 'RefundFailed' | 'StartUndone' }>
  | Extract<PurchaseWorkflowMessage, { type: 'ReadPurchase' | 'FinishSale' | 'Wait' }>;

/**
 * How many times the sale of a charged card purchase is tried again after a failed write: at once,
 * then after waits doubling from 50 ms, so the last try is ~6.4 s after the first failure and a
 * database away for a few seconds (a restart, a fail-over) still ends in the sale.
 */
export const SALE_ATTEMPTS = 8;
/**
 * No try starts later than this after the first failure: a try against a server cut off (packets
 * dropped) takes its statement's bound, and the answer must still come within the service's.
 */
export const SALE_RETRY_WINDOW_MS = 6_500;
/** After the last try failed, the purchase is settled by its recovery job this long after. */
export const SETTLE_FAILED_SALE_MS = 10_000;

/**
 * A card purchase's run that leaves it open after its charge answered (its sale's last try failed,
 * the refund of its unfulfilled charge failed, its start could not be undone): its recovery job
 * settles it from what was written, this long after, without waiting for a process to start.
 */
export const settleLater = (state: State, now: Date): Command =>
  command('ArmRecovery', { purchaseId: state.order.purchaseId, at: new Date(now.getTime() + SETTLE_FAILED_SALE_MS).toISOString() });

/** The refund of a charge whose units were gone failed: a card purchase's run leaves it open (a settling is tried again by its job). */
export const refundFailed = (state: State, now: Date): Command[] => (state.order.path === 'stored_card' ? [settleLater(state, now)] : []);

/** The sale's steps a failed write of which is tried again, for a charged card purchase. */
export const SALE: readonly Step[] = ['ReadPurchase', 'FinishSale'];

/**
 * The card is charged: a failed write must not leave it without its units and coupons. The sale is
 * tried again from what was written (its unit changes nothing written already), at once and then
 * after waits that double; what still fails is settled by its recovery job (armed then, see `decideTrouble`).
 */
export function retrySale(state: State): Command[] {
  return state.sale.attempts === 1
    ? [command('ReadPurchase', { purchaseId: state.order.purchaseId })]
    : [command('Wait', { ms: 50 * 2 ** (state.sale.attempts - 2) })];
}

export function decideSale(input: SaleInput, state: State): Command[] {
  switch (input.type) {
    case 'ReservationClaimStarted':
    case 'ResaleStarted':
      return [command('ReadPurchase', { purchaseId: input.data.purchaseId })];
    case 'PurchaseRead': {
      const { sold, holdId } = input.data;
      const images = command('DrawCouponImages', { purchaseId: state.order.purchaseId, quantity: state.order.quantity });
      return [images, sold ? finish(state, sold.holdId, { recorded: sold }) : finish(state, holdId)];
    }
    case 'HoldLapsed':
      // Fresh units in the hold's place, in the same unit; refused again (their hold released since): gone.
      return state.sale.fresh ? unitsGone(state) : [finish(state, replacementHoldId(state.order.purchaseId), { fresh: true })];
    case 'UnitsGone':
      return unitsGone(state);
    case 'ChargeRefunded':
      return [undoStart(state)];
    case 'SaleWritten':
      return [];
    case 'Waited':
      return [command('ReadPurchase', { purchaseId: state.order.purchaseId })];
  }
}

export function evolveSale(state: State, message: SaleMessage): State {
  switch (message.type) {
    case 'ReservationClaimStarted':
      return claimStarted(state, message.data);
    case 'ResaleStarted':
      return resaleStarted(state, message.data);
    case 'PurchaseRead': {
      const { deal, quantity } = message.data;
      return { ...saleStepDone(state, {}), order: { ...state.order, deal, dealId: deal.dealId, quantity } };
    }
    case 'HoldLapsed':
      return state.sale.fresh ? gone(state, message.data.error) : saleStepDone(state, {});
    case 'UnitsGone':
      return gone(state, message.data.error);
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
    case 'StartUndone': {
      const next = { ...state, undone: true };
      // The charge of units that were gone, refunded and recorded: the card purchase answers that they were gone.
      const { unitsGone } = state.sale;
      return state.order.path === 'stored_card' && unitsGone ? { ...next, answer: { outcome: 'refused', error: unitsGone } } : next;
    }
    case 'SaleWritten': {
      const { purchaseId } = state.order;
      return { ...saleStepDone(state, {}), answer: { outcome: 'sold', purchaseId, position: message.data.position } };
    }
    // Commands decided that the state follows: the sale's steps under way.
    case 'ReadPurchase':
      return { ...state, sale: { ...state.sale, steps: state.sale.steps + 1, fresh: false, retryDue: false } };
    case 'FinishSale':
      return { ...state, sale: { ...state.sale, steps: state.sale.steps + 1, fresh: message.data.units.fresh === true } };
    case 'Wait':
      return { ...state, sale: { ...state.sale, retryDue: false } };
  }
}

/** No units to sell: a charge is refunded (then its start undone); a claim or a resale is refused. */
export function unitsGone(state: State): Command[] {
  if (!charged(state)) return [];
  const { chargeId } = state.charge as { chargeId: string };
  return [command('Refund', { purchaseId: state.order.purchaseId, chargeId, amountCents: state.order.amountCents })];
}

/** The units gone: a charged sale goes on to its refund; one not charged is refused. */
export function gone(state: State, error: CannotFulfil): State {
  const next = saleStepDone(state, { unitsGone: error });
  return charged(state) ? next : { ...next, answer: { outcome: 'refused', error } };
}

function claimStarted(state: State, data: ReservationClaimStarted['data']): State {
  const { purchaseId, partnerId, userId, maxPerUser } = data;
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

function resaleStarted(state: State, data: ResaleStarted['data']): State {
  const { purchaseId, partnerId, transactionReference, terms } = data;
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

/**
 * The sale's unit: the units of `holdId` sold (`fresh`: held and sold in the same unit), the sale
 * recorded, its coupons issued and a card purchase's charge lock ended. `recorded`: the purchase
 * shows the sale recorded, with the coupons and holder it names (a retry's unit, to complete).
 */
export function finish(
  state: State,
  holdId = state.order.purchaseId,
  { fresh, recorded }: { fresh?: true; recorded?: { couponIds: string[]; userId: string | null } } = {},
): Command {
  const { purchaseId, partnerId, dealId, quantity, buyer, deal, record } = state.order;
  const unit: SaleUnit = {
    units: { purchaseId, dealId, holdId, quantity, ...buyer, ...(fresh ? { fresh } : {}) },
    record: { ...record, holdId },
    issue: {
      purchaseId,
      partnerId,
      deal: deal!,
      couponIds: recorded?.couponIds ?? couponIdsFor(purchaseId, quantity),
      userId: recorded ? recorded.userId : (state.order.holder ?? state.order.userId),
    },
    endCharge: lockEndedBySale(state),
    ...(recorded ? { recorded: true as const } : {}),
  };
  return command('FinishSale', unit);
}

/**
 * One of the sale's steps answered. Once none of a try is under way and one of them failed to
 * write: the sale is tried again from what was written, or, past its tries, fails with that error.
 */
export function saleStepDone(state: State, change: Partial<SaleProgress>, failedAt?: number): State {
  const sale = { ...state.sale, ...change, steps: state.sale.steps - 1 };
  if (failedAt !== undefined && sale.firstFailedAt === null) sale.firstFailedAt = failedAt;
  if (sale.steps > 0 || !sale.failure) return { ...state, sale };
  const nextWaitMs = sale.attempts === 0 ? 0 : 50 * 2 ** (sale.attempts - 1);
  const inWindow =
    failedAt === undefined || sale.firstFailedAt === null || failedAt + nextWaitMs - sale.firstFailedAt <= SALE_RETRY_WINDOW_MS;
  if (sale.attempts < SALE_ATTEMPTS && inWindow)
    return { ...state, sale: { ...sale, failure: null, attempts: sale.attempts + 1, retryDue: true } };
  return { ...state, sale, answer: { outcome: 'failed', error: sale.failure } };
}
