import { laterPosition } from '@deals/kernel';
import { buyerKey } from '../inventory/inventory.events';
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
  Step,
} from './purchase-workflow.types';

/**
 * The sale every path shares once paid for (a card charged, a claim, a resale): the held units sold,
 * the sale recorded and its coupons issued in one write (`FinishSale`); refused (the hold lapsed or
 * was released), step by step: the units sold (fresh ones when the hold lapsed), then the sale
 * recorded and its coupons issued. A claim and a resale whose purchase is written start here, from
 * what was written. Units gone after a charge: refund, then record the non-payment; nothing
 * charged: refused. A charged card purchase's failed write is tried again from what was written
 * (see `saleStepDone`).
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
      | 'UnitsSold'
      | 'UnitsGone'
      | 'ChargeRefunded'
      | 'SaleRecorded'
      | 'SaleWritten'
      | 'Waited';
  }
>;
type SaleMessage =
  | Exclude<SaleInput, { type: 'Waited' }>
  | Extract<PurchaseWorkflowInput, { type: 'RefundFailed' | 'StartUndone' | 'CouponsIssued' }>
  | Extract<PurchaseWorkflowMessage, { type: 'ReadPurchase' | 'SellUnits' | 'RecordSale' | 'IssueCoupons' | 'FinishSale' | 'Wait' }>;

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

/** The sale's steps a failed write of which is tried again, for a charged card purchase. */
export const SALE: readonly Step[] = ['ReadPurchase', 'SellUnits', 'RecordSale', 'IssueCoupons', 'FinishSale'];

/** Whether the sale is written the quick way: the payment and the coupons together (a card purchase charged a moment ago, first try). */
const quickSale = (state: State) => state.order.path === 'stored_card' && state.sale.attempts === 0;

/**
 * The card is charged: a failed write must not leave it without its units and coupons. The sale is
 * tried again from what was written (every step is idempotent), at once and then after waits that
 * double; what still fails is settled by its recovery job (armed then, see `decideTrouble`).
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
      return [images, ...(sold ? afterSold(state, sold.holdId) : [finish(state, holdId)])];
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
      return [undoStart(state)];
    case 'SaleRecorded':
      return quickSale(state) ? [] : [issue(state, input.data.couponIds, input.data.userId)];
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
    case 'StartUndone': {
      const next = { ...state, undone: true };
      // The charge of units that were gone, refunded and recorded: the card purchase answers that they were gone.
      const { unitsGone } = state.sale;
      return state.order.path === 'stored_card' && unitsGone ? { ...next, answer: { outcome: 'refused', error: unitsGone } } : next;
    }
    case 'SaleRecorded':
      return sold(saleStepDone(state, { recorded: { position: message.data.position } }));
    case 'CouponsIssued':
      return sold(saleStepDone(state, { issued: { position: message.data.position } }));
    case 'SaleWritten': {
      const at = { position: message.data.position };
      return sold(saleStepDone(state, { recorded: at, issued: at }));
    }
    // Commands decided that the state follows: the sale's steps under way.
    case 'ReadPurchase':
      return { ...state, sale: { ...state.sale, steps: state.sale.steps + 1, recorded: null, issued: null, retryDue: false } };
    case 'SellUnits':
    case 'RecordSale':
    case 'IssueCoupons':
    case 'FinishSale':
      return { ...state, sale: { ...state.sale, steps: state.sale.steps + 1 } };
    case 'Wait':
      return { ...state, sale: { ...state.sale, retryDue: false } };
  }
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

export function sell(state: State, holdId: string, dated = false): Command {
  return command('SellUnits', {
    purchaseId: state.order.purchaseId,
    dealId: state.order.dealId,
    holdId,
    quantity: state.order.quantity,
    ...state.order.buyer,
    ...(dated ? { dated: true as const } : {}),
  });
}

/**
 * The sale in one write: the units of `holdId` sold, the sale recorded, its coupons issued and a
 * card purchase's charge lock ended (a charged card purchase's, a claim's, a resale's). Refused, it
 * goes step by step (`decideTrouble`).
 */
export function finish(state: State, holdId = state.order.purchaseId): Command {
  const { purchaseId, quantity, userId } = state.order;
  return command('FinishSale', {
    sell: (sell(state, holdId) as Extract<Command, { type: 'SellUnits' }>).data,
    record: { ...state.order.record, holdId } as Extract<Command, { type: 'RecordSale' }>['data'],
    issue: (issue(state, couponIdsFor(purchaseId, quantity), userId) as Extract<Command, { type: 'IssueCoupons' }>).data,
    endCharge: lockEndedBySale(state),
  });
}

/** The units sold: the sale recorded, and its coupons issued (beside it the quick way, else after it). */
function afterSold(state: State, holdId: string): Command[] {
  const record = { ...state.order.record!, holdId } as Extract<Command, { type: 'RecordSale' }>['data'];
  const commands: Command[] = [command('RecordSale', record)];
  if (quickSale(state)) commands.push(issue(state, couponIdsFor(state.order.purchaseId, state.order.quantity), state.order.userId));
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

/** Recorded and its coupons issued: sold. */
function sold(state: State): State {
  const { recorded, issued } = state.sale;
  if (!recorded || !issued) return state;
  return {
    ...state,
    answer: { outcome: 'sold', purchaseId: state.order.purchaseId, position: laterPosition(recorded.position, issued.position) },
  };
}
