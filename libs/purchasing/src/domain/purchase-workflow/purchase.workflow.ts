import { Workflow } from '@deals/kernel';
import { decideSettling, evolveSettling } from './card-purchase-settling';
import { decideCardPurchaseStart, evolveCardPurchaseStart } from './card-purchase-start';
import { NO_ORDER } from './purchase-workflow.common';
import type { PurchaseWorkflowCommand, PurchaseWorkflowInput, PurchaseWorkflowState } from './purchase-workflow.types';
import { decideResaleStart, evolveResaleStart } from './resale-start';
import { decideSale, evolveSale, refundFailed, retrySale } from './sale';
import { decideTrouble, evolveTrouble } from './trouble';

export type * from './purchase-workflow.types';
export { SOLD_OUT_DURING_CHARGE } from './purchase-workflow.common';
export { SALE_ATTEMPTS } from './sale';

/**
 * The purchase, from its start to its answer, as one pure workflow: every way a purchase is paid
 * for (a stored card, a full purchase, the claim of a reservation, a reseller's sale) and the
 * settling of a card purchase a crash or a silent processor left open. Its inputs are what happens
 * to the purchase; its outputs the commands the deciders and ports take. `runWorkflow` carries them
 * out and feeds each result back; the handlers read the answer from the final state.
 *
 * A stored-card purchase takes the user's charge lock, records the purchase and holds its units in
 * one unit of work (all or none), answering its refusal if refused. Then it
 * charges the card (idempotent by purchase id) and arms the hold's release; approved: ends the
 * lock and sells; declined or failed: ends the lock, releases the hold, records the non-payment;
 * no answer: keeps the lock and arms the settling at its end. A sale is one unit of work: the
 * held units sold (or fresh ones held and sold in it when the hold lapsed), the sale recorded, the
 * coupons issued and a card purchase's lock ended. Units gone after the charge: refund, then record
 * the non-payment. No charge without units, no units without a charge. A reseller's new sale claims its transaction reference, holds, marks the claim
 * selling and reserves first (`resale-start.ts`); then it is sold as a claim is.
 *
 * Each path is a part of its own, handed its inputs here: `card-purchase-start.ts` (the stored
 * card's start and charge), `sale.ts` (the sale and coupons every path shares), `trouble.ts` (a
 * step refused or failed), `card-purchase-settling.ts` (the settling, from the purchase's stream), and
 * `resale-start.ts`. The cases keep the order they had in one switch: the stored card's first.
 */

type Input = PurchaseWorkflowInput;
type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;

export const purchaseWorkflow: Workflow<Input, State, Command> = {
  initialState: () => ({
    order: NO_ORDER,
    start: { awaiting: [] },
    charge: null,
    sale: { steps: 0, failure: null, attempts: 0, firstFailedAt: null, retryDue: false, unitsGone: null, fresh: false },
    refunded: false,
    undone: false,
    settleAt: null,
    answer: null,
  }),

  decide(input, state, now) {
    return state.sale.retryDue ? retrySale(state) : decideInput(input, state, now);
  },

  evolve(state, message) {
    switch (message.type) {
      case 'StoredCardPurchaseStarted':
        return evolveCardPurchaseStart(state, message);
      case 'ReservationClaimStarted':
      case 'ResaleStarted':
        return evolveSale(state, message);
      case 'SettlingStarted':
        return evolveSettling(state, message);
      case 'PurchaseStartWritten':
      case 'ChargeApproved':
      case 'ChargeDeclined':
      case 'ChargeFailed':
      case 'ChargeUnanswered':
        return evolveCardPurchaseStart(state, message);
      case 'ChargeLookedUp':
      case 'RefundLookedUp':
        return evolveSettling(state, message);
      case 'PurchaseRead':
      case 'HoldLapsed':
      case 'UnitsGone':
      case 'ChargeRefunded':
      case 'RefundFailed':
        return evolveSale(state, message);
      // A settling's sale or undo written with its lock's end: what it did is its answer.
      case 'SaleWritten':
      case 'StartUndone':
        return evolveSettling(evolveSale(state, message), message);
      case 'StepRefused':
      case 'StepFailed':
        return evolveTrouble(state, message);
      // Commands decided that the state follows: the sale's steps under way, the settling's time.
      case 'ReadPurchase':
      case 'FinishSale':
      case 'Wait':
        return evolveSale(state, message);
      case 'ArmRecovery':
        return evolveCardPurchaseStart(state, message);
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

/** What an input leads to, by the part of the workflow it belongs to. */
function decideInput(input: Input, state: State, now: Date): Command[] {
  switch (input.type) {
    case 'StoredCardPurchaseStarted':
      return decideCardPurchaseStart(input, state, now);
    case 'ReservationClaimStarted':
    case 'ResaleStarted':
      return decideSale(input, state);
    case 'SettlingStarted':
      return decideSettling(input, state);
    case 'PurchaseStartWritten':
    case 'ChargeApproved':
    case 'ChargeDeclined':
    case 'ChargeFailed':
    case 'ChargeUnanswered':
    case 'RecoveryArmed':
      return decideCardPurchaseStart(input, state, now);
    case 'ChargeLookedUp':
    case 'RefundLookedUp':
      return decideSettling(input, state);
    case 'PurchaseRead':
    case 'HoldLapsed':
    case 'UnitsGone':
    case 'ChargeRefunded':
      return decideSale(input, state);
    case 'RefundFailed':
      return refundFailed(state, now);
    case 'SaleWritten':
    case 'StartUndone':
      return [];
    case 'Waited':
      return decideSale(input, state);
    case 'StepRefused':
    case 'StepFailed':
      return decideTrouble(input, state, now);
    case 'ResaleRequested':
    case 'ReferenceClaimed':
    case 'ReferenceClaimedBefore':
    case 'ResaleDealChecked':
    case 'ResaleUnitsRefused':
    case 'ReferenceClaimSuperseded':
    case 'ReferenceGivenUp':
    case 'ResaleReserved':
      return decideResaleStart(input, state, now);
    default:
      return [];
  }
}
