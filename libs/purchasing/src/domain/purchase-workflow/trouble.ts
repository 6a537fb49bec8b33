import { CannotFulfil } from '@deals/kernel';
import { charged } from './purchase-workflow.common';
import type { PurchaseWorkflowCommand, PurchaseWorkflowInput, PurchaseWorkflowState } from './purchase-workflow.types';
import { gone, SALE, saleStepDone, settleLater, unitsGone } from './sale';

/**
 * A step refused (a decider's domain error) or failed (a write, a store away): a charged sale's
 * failed write is tried again, and past its tries settled by its recovery job; the rest end the
 * purchase with its error (a stored-card start's refusal among them: it wrote nothing). A sale's
 * unit refused for its units comes as `HoldLapsed` or `UnitsGone` instead (`sale.ts`).
 */

type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;
type Trouble = Extract<PurchaseWorkflowInput, { type: 'StepRefused' | 'StepFailed' }>;

/** A charged card purchase's sale whose write failed: tried again (see `saleStepDone`). */
const chargedSaleFailed = (input: Trouble, state: State) =>
  input.type === 'StepFailed' && charged(state) && state.order.path === 'stored_card' && SALE.includes(input.data.step);

/** What a charged purchase whose sale was refused answers (its refusal's own words concern the log, not the buyer). */
export const SALE_REFUSED = 'the purchase could not be sold after its charge; the charge was refunded';

/**
 * A charged card purchase's sale refused by a decider (not for its units: its purchase no longer
 * open, a settling having recorded it not paid while the charge was on its way): its unit wrote
 * nothing and never will, so the charge is refunded and the start undone, as when the units are gone.
 */
const chargedSaleRefused = (input: Trouble, state: State) =>
  input.type === 'StepRefused' && input.data.step === 'FinishSale' && charged(state);

/** What follows a step's refusal or failure (most end the purchase with that error, see `evolveTrouble`). */
export function decideTrouble(input: Trouble, state: State, now: Date): Command[] {
  if (chargedSaleRefused(input, state)) return unitsGone(state);
  // The charged sale failed its last try: its recovery job sells it from what was written (the
  // charge has answered, so nothing is in flight), without waiting for a process to start.
  if (chargedSaleFailed(input, state) && state.answer?.outcome === 'failed') return [settleLater(state, now)];
  // A card purchase's start not undone (its charge declined, failed, or refunded): left open, settled by its job.
  if (input.data.step === 'UndoStart' && state.order.path === 'stored_card') return [settleLater(state, now)];
  return [];
}

/** A step refused or failed: a charged sale's failed write is tried again; the rest end the purchase with its error. */
export function evolveTrouble(state: State, input: Trouble): State {
  const { step, error } = input.data;
  if (chargedSaleFailed(input, state))
    return saleStepDone(state, { failure: state.sale.failure ?? error }, input.type === 'StepFailed' ? input.data.at : undefined);
  if (chargedSaleRefused(input, state)) return gone(state, new CannotFulfil(SALE_REFUSED));
  const next = SALE.includes(step) ? saleStepDone(state, {}) : state;
  return { ...next, answer: { outcome: input.type === 'StepRefused' ? 'refused' : 'failed', error } };
}
