import { CannotFulfilReseller, NotFound } from '@deals/kernel';
import { holdExpiry } from '../inventory/inventory.events';
import type { ResaleTerms } from '../purchase/resale-claim';
import type { PurchaseOrder, PurchaseWorkflowCommand, PurchaseWorkflowState } from './purchase-workflow.types';
import type { OnReference, ResaleRequested, ResaleStartInput } from './resale-start.types';

export type * from './resale-start.types';

/**
 * The start of a reseller's sale, the purchase workflow's part before the sale it shares with the
 * other paths. The transaction reference is claimed first: by this request (a new sale), or by a
 * first request (a repeat: the first's sale is completed, with its own deal, quantity and terms,
 * never this body's). Then one unit of work holds the units, marks the claim selling (from here it
 * cannot be given up) and reserves the purchase, all or none; the sale follows as for any purchase
 * (`ReadPurchase`).
 *
 * A sale refused (its deal not sold now, or its units gone) gives the reference up, so that a retry
 * is a new sale; a claim given up under this request meanwhile (another request's sale of it
 * refused) refuses the unit, and the request starts again with a claim of its own.
 */

type Caller = { partnerId: string };

type State = PurchaseWorkflowState;
type Input = ResaleRequested | ResaleStartInput;
type Command = PurchaseWorkflowCommand;

const resaleRecord = (state: State) => state.order.record as Extract<PurchaseOrder['record'], { kind: 'resale' }>;
const onReference = (state: State): OnReference => ({
  partnerId: state.order.partnerId,
  transactionReference: resaleRecord(state).data.transactionReference,
  purchaseId: state.order.purchaseId,
});

/** The sale to make: its start written once its deal is sold now; else the reference given up, with the refusal as its reason. */
function startOrGiveUp(state: State, now: Date): Command[] {
  const { answer, order } = state;
  if (answer?.outcome === 'refused')
    return [{ type: 'ReleaseTransactionReference', data: { ...onReference(state), reason: answer.error.message } }];
  return [
    {
      type: 'StartResale',
      data: {
        hold: { dealId: order.dealId, holdId: order.purchaseId, quantity: order.quantity },
        mark: onReference(state),
        reserve: {
          purchaseId: order.purchaseId,
          partnerId: order.partnerId,
          deal: order.deal!,
          quantity: order.quantity,
          holdId: order.purchaseId,
          reservedAt: now.toISOString(),
          holdExpiresAt: new Date(holdExpiry(now.getTime())).toISOString(),
          via: 'reseller',
          transactionReference: resaleRecord(state).data.transactionReference,
        },
      },
    },
  ];
}

export function decideResaleStart(input: Input, state: State, now: Date): Command[] {
  const { order } = state;
  switch (input.type) {
    case 'ResaleRequested': {
      const { partnerId, transactionReference, purchaseId, dealId, quantity, terms } = input.data;
      // The claim keeps what this request asks for: a repeat sent meanwhile completes this sale, not its own.
      return [{ type: 'ClaimTransactionReference', data: { partnerId, transactionReference, purchaseId, dealId, quantity, terms } }];
    }
    case 'ReferenceClaimed':
    case 'ResaleDealChecked':
      return startOrGiveUp(state, now);
    case 'ReferenceClaimedBefore':
      // Its purchase written: completed as it was recorded. Else its deal is read again for its quantity.
      if (input.data.reserved) return [{ type: 'ReadPurchase', data: { purchaseId: order.purchaseId } }];
      return [{ type: 'CheckResaleDeal', data: { dealId: order.dealId, quantity: order.quantity } }];
    case 'ResaleUnitsRefused':
      return [{ type: 'ReleaseTransactionReference', data: { ...onReference(state), reason: input.data.error.message } }];
    case 'ReferenceClaimSuperseded':
      // Nothing was written; the request starts again with a claim of its own.
      return [];
    case 'ResaleReserved':
      return [{ type: 'ReadPurchase', data: { purchaseId: order.purchaseId } }];
    case 'ReferenceGivenUp':
      return [];
  }
}

const refused = (state: State, error: Error): State => ({ ...state, answer: { outcome: 'refused', error } });

export function evolveResaleStart(state: State, input: Input): State {
  switch (input.type) {
    case 'ResaleRequested': {
      const { deal, ...sale } = input.data;
      return { ...state, order: { ...resaleOrder(state.order, sale), deal: deal.snapshot, resale: { refusal: deal.refusal } } };
    }
    case 'ReferenceClaimed': {
      const { refusal } = state.order.resale!;
      return refusal === null ? state : refused(state, new CannotFulfilReseller(refusal));
    }
    case 'ReferenceClaimedBefore': {
      // The first request's sale, this body's fields standing in for those an old claim lacks.
      const { purchaseId, dealId, quantity, terms } = input.data;
      const { order } = state;
      const { transactionReference, amountCents, transactionDate, buyer } = resaleRecord(state).data;
      const sale = {
        purchaseId,
        partnerId: order.partnerId,
        transactionReference,
        dealId: dealId ?? order.dealId,
        quantity: quantity ?? order.quantity,
        terms: terms ?? { amountCents, transactionDate, buyer },
      };
      return { ...state, order: resaleOrder(order, sale) };
    }
    case 'ResaleDealChecked': {
      const { deal } = input.data;
      if (deal === null) return refused(state, new NotFound('deal not found'));
      const next = { ...state, order: { ...state.order, deal: deal.snapshot } };
      return deal.refusal === null ? next : refused(next, new CannotFulfilReseller(deal.refusal));
    }
    case 'ResaleUnitsRefused':
      return refused(state, new CannotFulfilReseller(input.data.error.message));
    case 'ReferenceClaimSuperseded':
      return { ...state, answer: { outcome: 'failed', error: input.data.error } };
    default:
      return state;
  }
}

/** The order of a resale: its purchase, deal and quantity, and what its sale records. */
function resaleOrder(
  order: PurchaseOrder,
  sale: Caller & { purchaseId: string; transactionReference: string; dealId: string; quantity: number; terms: ResaleTerms },
): PurchaseOrder {
  const { purchaseId, partnerId, transactionReference, dealId, quantity, terms } = sale;
  const { transactionDate, amountCents, buyer } = terms;
  return {
    ...order,
    path: 'resale',
    purchaseId,
    partnerId,
    dealId,
    quantity,
    record: { kind: 'resale', data: { purchaseId, partnerId, transactionReference, transactionDate, amountCents, buyer } },
  };
}
