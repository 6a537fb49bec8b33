import { buyerKey } from '../inventory/inventory.events';
import type { PurchaseEvent, PurchaseReserved } from '../purchase/purchase.events';
import { approved } from './card-purchase-start';
import { charged, command, NO_ORDER, undoStart } from './purchase-workflow.common';
import type { PurchaseWorkflowCommand, PurchaseWorkflowInput, PurchaseWorkflowState, SettlingStarted } from './purchase-workflow.types';

/**
 * The settling of a card purchase a crash or a silent processor left open (start-up recovery, the
 * `recover-purchase` job, a keyed request run again): the workflow's state is the fold of the
 * purchase's stream, and its next step is decided from it. Open (reserved for a card, neither paid
 * nor its non-payment recorded): the processor is asked what it recorded under the purchase's id
 * (never a charge). Never charged, declined or failed: the start undone in one unit (the hold
 * released, the non-payment recorded, the lock ended). Approved and refunded before the crash: the
 * same. Approved: the sale with the lock's end in one unit (`sale.ts`; on fresh units in the same
 * unit if the hold lapsed, counted against the deal's per-user limit; the held units not counted
 * again), or a refund and the undo when the units are gone now. The answer says what it did.
 */

type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;

type SettlingInput = Extract<
  PurchaseWorkflowInput,
  {
    type: 'SettlingStarted' | 'ChargeLookedUp' | 'RefundLookedUp';
  }
>;
type SettlingMessage = Extract<
  PurchaseWorkflowInput,
  { type: 'SettlingStarted' | 'ChargeLookedUp' | 'RefundLookedUp' | 'SaleWritten' | 'StartUndone' }
>;

export function decideSettling(input: SettlingInput, state: State): Command[] {
  switch (input.type) {
    case 'SettlingStarted':
      // Settled already (or never a card purchase): nothing to do.
      return state.answer ? [] : [command('LookUpCharge', { purchaseId: input.data.purchaseId })];
    case 'ChargeLookedUp':
      if (charged(state)) return [command('LookUpRefund', { purchaseId: state.order.purchaseId })];
      return [undoStart(state)];
    case 'RefundLookedUp':
      // Refunded before the crash (its units could not be sold): closed, never sold.
      if (state.refunded) return [undoStart(state)];
      return [command('ReadPurchase', { purchaseId: state.order.purchaseId })];
  }
}

export function evolveSettling(state: State, message: SettlingMessage): State {
  switch (message.type) {
    case 'SettlingStarted':
      return settlingOf(state, message.data);
    case 'ChargeLookedUp': {
      const { charge } = message.data;
      if (charge === null) return { ...state, charge: { status: 'never' } };
      if (charge.status === 'approved') return approved(state, charge.chargeId);
      return { ...state, charge };
    }
    case 'RefundLookedUp':
      return { ...state, refunded: message.data.refunded };
    case 'SaleWritten':
    case 'StartUndone':
      // Written with the lock's end in its unit.
      return settledBy(state);
  }
}

/** A settling whose last step is written: what it did is its answer (a card purchase's own run keeps its answer). */
function settledBy(state: State): State {
  return state.order.path === 'settling' && (state.answer === null || state.answer.outcome === 'sold')
    ? { ...state, answer: { outcome: 'settled', purchaseId: state.order.purchaseId, summary: settlingSummary(state) } }
    : state;
}

/** The card purchase a stream holds while it is open: its reservation for a card, neither paid nor its non-payment recorded. */
export function cardPurchaseLeftOpen(history: readonly PurchaseEvent[]): PurchaseReserved | null {
  const [first] = history;
  if (first?.type !== 'PurchaseReserved' || !first.data.payment) return null;
  return history.some((event) => event.type === 'PurchasePaid' || event.type === 'PurchaseNotPaid') ? null : first;
}

/** The workflow's state folded from the purchase's stream: its order as reserved, or settled when nothing is open. */
function settlingOf(state: State, { purchaseId, history }: SettlingStarted['data']): State {
  const reserved = cardPurchaseLeftOpen(history);
  if (!reserved)
    return {
      ...state,
      order: { ...NO_ORDER, path: 'settling', purchaseId },
      answer: { outcome: 'settled', purchaseId, summary: 'nothing open' },
    };
  const { partnerId, deal, quantity, gift } = reserved.data;
  const { userId, creditCardId, sessionId } = reserved.data.payment!;
  return {
    ...state,
    order: {
      ...NO_ORDER,
      path: 'settling',
      purchaseId,
      partnerId,
      userId,
      ...(gift ? { holder: gift.userId } : {}),
      dealId: deal.dealId,
      quantity,
      deal,
      amountCents: deal.unitPrice * quantity,
      // The held units are not counted again (they were when the charged hold was taken); fresh units
      // in their place count against the deal's limit as the sale's unit reads it (`CouponIssuer`).
      buyer: { buyer: buyerKey(partnerId, userId) },
      record: { kind: 'payment', data: { purchaseId, partnerId, userId, creditCardId, chargeId: '', sessionId } },
    },
  };
}

/** What a settling did, for the log. */
function settlingSummary(state: State): string {
  const { charge } = state;
  if (charge?.status !== 'approved') return charge?.status === 'never' || !charge ? 'never charged' : charge.status;
  if (state.sale.unitsGone) return 'approved, but sold out meanwhile: refunded';
  if (state.refunded) return 'refunded before the crash';
  return 'approved; sold and coupons issued';
}
