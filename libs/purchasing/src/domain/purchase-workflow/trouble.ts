import { charged } from './purchase-workflow.common';
import type { PurchaseWorkflowCommand, PurchaseWorkflowInput, PurchaseWorkflowState } from './purchase-workflow.types';
import { SALE, saleStepDone, settleLater } from './sale';

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

/** What follows a step's refusal or failure (most end the purchase with that error, see `evolveTrouble`). */
export function decideTrouble(input: Trouble, state: State, now: Date): Command[] {
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
  const next = SALE.includes(step) ? saleStepDone(state, {}) : state;
  return { ...next, answer: { outcome: input.type === 'StepRefused' ? 'refused' : 'failed', error } };
}
