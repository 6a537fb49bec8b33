import type { Lock, NonPayment, PurchaseOrder, PurchaseWorkflowCommand, PurchaseWorkflowState, Step } from './purchase-workflow.types';

/** What every part of the purchase workflow uses: its commands' constructor, and what they read from the state. */

type Command = PurchaseWorkflowCommand;
type State = PurchaseWorkflowState;

export const SOLD_OUT_DURING_CHARGE = 'sold out during the charge; the charge was refunded';

export const command = <T extends Step>(type: T, data: Extract<Command, { type: T }>['data']) =>
  ({ type, data }) as Extract<Command, { type: T }>;

export const report = (message: string) => command('Report', { level: 'error', message });

export const charged = (state: State) => state.charge?.status === 'approved';
export const lock = (state: State): Lock => ({ userId: state.order.userId!, purchaseId: state.order.purchaseId });

/** The non-payment a purchase records: its charge's refusal, or a refund of a charge whose units were gone. */
export function nonPayment(state: State): NonPayment {
  const { purchaseId, partnerId } = state.order;
  const { charge } = state;
  if (state.refunded) return { purchaseId, partnerId, outcome: 'error', reason: SOLD_OUT_DURING_CHARGE };
  if (charge?.status === 'declined') return { purchaseId, partnerId, outcome: 'declined', reason: charge.reason };
  if (charge?.status === 'error') return { purchaseId, partnerId, outcome: 'error', reason: charge.reason };
  return { purchaseId, partnerId, outcome: 'error', reason: 'interrupted before charging' };
}

/** A card purchase's start undone in one unit: its lock, its held units, its non-payment. */
export const undoStart = (state: State) =>
  command('UndoStart', {
    lock: lock(state),
    hold: { dealId: state.order.dealId, holdId: state.order.purchaseId },
    nonPayment: nonPayment(state),
  });

/** A card purchase's lock, whose end its sale's unit carries (every try's); null for a claim's or a resale's sale. */
export const lockEndedBySale = (state: State): Lock | null =>
  state.order.path === 'stored_card' || state.order.path === 'settling' ? lock(state) : null;

/** An order not started yet. */
export const NO_ORDER: PurchaseOrder = {
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
