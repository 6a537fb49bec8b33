import { TestClockMoved } from '@deals/kernel';
import { charged, command, report } from './purchase-workflow.common';
import type { PurchaseWorkflowCommand, PurchaseWorkflowInput, PurchaseWorkflowState } from './purchase-workflow.types';
import { SALE, saleStepDone, sell, SETTLE_FAILED_SALE_MS } from './sale';

/**
 * A step refused (a decider's domain error) or failed (a write, a store away): a charge lock that
 * could not be ended is reported (it lapses by itself); a quick sale refused goes step by step; a charged sale's failed write is tried
 * again, and past its tries settled by its recovery job; the rest end the purchase with its error
 * (a stored-card start's refusal among them: it wrote nothing).
 */

type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;
type Trouble = Extract<PurchaseWorkflowInput, { type: 'StepRefused' | 'StepFailed' }>;

/**
 * The quick sale refused for its units: sold step by step. Refused because its test clock moved
 * while the call ran, it ends with that refusal (nothing was written; the call is made again).
 */
const quickSaleRefused = (input: Trouble) =>
  input.type === 'StepRefused' && input.data.step === 'FinishSale' && !(input.data.error instanceof TestClockMoved);

/** What follows a step's refusal or failure (most end the purchase with that error, see `evolveTrouble`). */
export function decideTrouble(input: Trouble, state: State, now: Date): Command[] {
  const { step, error } = input.data;
  // The quick sale refused (its hold lapsed or was released): sold step by step, on fresh units if
  // any; a claim's or a resale's (its record dated now) checked against a test clock before any is sold.
  if (quickSaleRefused(input)) return [sell(state, state.order.purchaseId, state.order.record?.kind !== 'payment')];
  // The charged sale failed its last try: its recovery job sells it from what was written (the
  // charge has answered, so nothing is in flight), without waiting for a process to start.
  if (
    input.type === 'StepFailed' &&
    state.answer?.outcome === 'failed' &&
    charged(state) &&
    state.order.path === 'stored_card' &&
    SALE.includes(step)
  )
    return [
      command('ArmRecovery', { purchaseId: state.order.purchaseId, at: new Date(now.getTime() + SETTLE_FAILED_SALE_MS).toISOString() }),
    ];
  if (step === 'EndCharge' && state.order.path !== 'settling')
    return [report(`purchase ${state.order.purchaseId}: its charge lock could not be ended (${error.message}); it lapses by itself`)];
  return [];
}

/**
 * A step refused or failed: a charged sale's failed write is tried again; the rest end the purchase
 * with its error. A card purchase's first sale unit carried its lock's end: that end is now due alone.
 */
export function evolveTrouble(before: State, input: Trouble): State {
  const { step, error } = input.data;
  const state =
    step === 'FinishSale' && before.order.path === 'stored_card' && before.sale.attempts === 0 ? { ...before, lockEndDue: true } : before;
  if (step === 'EndCharge' && state.order.path !== 'settling') return state;
  if (quickSaleRefused(input)) return saleStepDone(state, {});
  // The card is charged: a failed write of its sale is tried again (see `saleStepDone`).
  if (input.type === 'StepFailed' && charged(state) && state.order.path === 'stored_card' && SALE.includes(step))
    return saleStepDone(state, { failure: state.sale.failure ?? error }, input.type === 'StepFailed' ? input.data.at : undefined);
  const next = SALE.includes(step) ? saleStepDone(state, {}) : state;
  return { ...next, answer: { outcome: input.type === 'StepRefused' ? 'refused' : 'failed', error } };
}
