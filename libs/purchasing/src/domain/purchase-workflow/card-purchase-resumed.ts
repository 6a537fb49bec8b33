import { buyerKey } from '../inventory/inventory.events';
import { approved } from './card-purchase-start';
import { charged, command, NO_ORDER, undoStart } from './purchase-workflow.common';
import type { CardPurchaseResumed, PurchaseWorkflowCommand, PurchaseWorkflowInput, PurchaseWorkflowState } from './purchase-workflow.types';

/**
 * The settling of a card purchase a crash or a silent processor left open (start-up recovery, the
 * `recover-purchase` job): the processor is asked what it recorded under the purchase's id (never a
 * charge). Never charged, declined or failed: the start undone in one unit (the hold released, the
 * non-payment recorded, the lock ended). Approved and refunded before the crash: the same. Approved:
 * the sale with the lock's end in one unit (`sale.ts`; on fresh units in the same unit if the hold
 * lapsed; the limit not applied again), or a refund and the undo when the units are gone now. The answer says what the settling did.
 */

type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;

type ResumedInput = Extract<
  PurchaseWorkflowInput,
  {
    type: 'CardPurchaseResumed' | 'ChargeLookedUp' | 'RefundLookedUp';
  }
>;
type ResumedMessage = Extract<
  PurchaseWorkflowInput,
  { type: 'CardPurchaseResumed' | 'ChargeLookedUp' | 'RefundLookedUp' | 'SaleWritten' | 'StartUndone' }
>;

export function decideCardPurchaseResumed(input: ResumedInput, state: State): Command[] {
  switch (input.type) {
    case 'CardPurchaseResumed':
      return [command('LookUpCharge', { purchaseId: input.data.purchaseId })];
    case 'ChargeLookedUp':
      if (charged(state)) return [command('LookUpRefund', { purchaseId: state.order.purchaseId })];
      return [undoStart(state)];
    case 'RefundLookedUp':
      // Refunded before the crash (its units could not be sold): closed, never sold.
      if (state.refunded) return [undoStart(state)];
      return [command('ReadPurchase', { purchaseId: state.order.purchaseId })];
  }
}

export function evolveCardPurchaseResumed(state: State, message: ResumedMessage): State {
  switch (message.type) {
    case 'CardPurchaseResumed':
      return resumed(state, message.data);
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
  return state.order.path === 'resumed' && (state.answer === null || state.answer.outcome === 'sold')
    ? { ...state, answer: { outcome: 'settled', purchaseId: state.order.purchaseId, summary: settlingSummary(state) } }
    : state;
}

function resumed(state: State, data: CardPurchaseResumed['data']): State {
  const { purchaseId, partnerId, userId, dealId, amountCents, creditCardId } = data;
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

/** What a settling did, for the log. */
function settlingSummary(state: State): string {
  const { charge } = state;
  if (charge?.status !== 'approved') return charge?.status === 'never' || !charge ? 'never charged' : charge.status;
  if (state.sale.unitsGone) return 'approved, but sold out meanwhile: refunded';
  if (state.refunded) return 'refunded before the crash';
  return 'approved; sold and coupons issued';
}
