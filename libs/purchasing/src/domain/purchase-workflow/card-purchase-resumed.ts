import { buyerKey } from '../inventory/inventory.events';
import { approved } from './card-purchase-start';
import { charged, command, lock, NO_ORDER, nonPayment } from './purchase-workflow.common';
import type { CardPurchaseResumed, PurchaseWorkflowCommand, PurchaseWorkflowInput, PurchaseWorkflowState } from './purchase-workflow.types';

/**
 * The settling of a card purchase a crash or a silent processor left open (start-up recovery, the
 * `recover-purchase` job): the processor is asked what it recorded under the purchase's id (never a
 * charge). Never charged, declined or failed: the hold released, the non-payment recorded. Approved
 * and refunded before the crash: the same. Approved: the sale (`sale.ts`, on a fresh hold if the
 * first lapsed; the limit not applied again), or a refund when the units are gone now. Each ends
 * with the user's charge lock, and the answer says what the settling did.
 */

type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;

type ResumedInput = Extract<
  PurchaseWorkflowInput,
  {
    type:
      'CardPurchaseResumed' | 'ChargeLookedUp' | 'RefundLookedUp' | 'CouponsIssued' | 'SaleWritten' | 'HoldReleased' | 'NonPaymentRecorded';
  }
>;
type ResumedMessage = Extract<
  PurchaseWorkflowInput,
  { type: 'CardPurchaseResumed' | 'ChargeLookedUp' | 'RefundLookedUp' | 'HoldReleased' | 'ChargeLockEnded' }
>;

export function decideCardPurchaseResumed(input: ResumedInput, state: State): Command[] {
  switch (input.type) {
    case 'CardPurchaseResumed':
      return [command('LookUpCharge', { purchaseId: input.data.purchaseId })];
    case 'ChargeLookedUp':
      if (charged(state)) return [command('LookUpRefund', { purchaseId: state.order.purchaseId })];
      return [command('ReleaseHold', { dealId: state.order.dealId, holdId: state.order.purchaseId, reason: 'payment_failed' })];
    case 'RefundLookedUp':
      // Refunded before the crash (its units could not be sold): closed, never sold.
      if (state.refunded)
        return [command('ReleaseHold', { dealId: state.order.dealId, holdId: state.order.purchaseId, reason: 'payment_failed' })];
      return [command('ReadPurchase', { purchaseId: state.order.purchaseId })];
    case 'CouponsIssued':
    case 'SaleWritten':
      return state.answer?.outcome === 'sold' && state.order.path === 'resumed' ? afterSettled(state) : [];
    case 'HoldReleased':
      if (state.order.path !== 'resumed') return [];
      return state.nonPaymentRecorded ? afterSettled(state) : [command('RecordNonPayment', nonPayment(state))];
    case 'NonPaymentRecorded':
      if (state.order.path !== 'resumed') return [];
      return state.holdReleased
        ? afterSettled(state)
        : [command('ReleaseHold', { dealId: state.order.dealId, holdId: state.order.purchaseId, reason: 'payment_failed' })];
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
    case 'HoldReleased':
      return { ...state, holdReleased: true };
    case 'ChargeLockEnded':
      // A settling's last step: what it did is its answer.
      return state.order.path === 'resumed' && (state.answer === null || state.answer.outcome === 'sold')
        ? { ...state, answer: { outcome: 'settled', purchaseId: state.order.purchaseId, summary: settlingSummary(state) } }
        : state;
  }
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
