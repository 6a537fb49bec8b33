import { Workflow } from '@deals/kernel';
import type { RefundState } from './refund-rules';

/** A refund as its purchase records it, read when its settling starts. */
export interface RefundToSettle {
  purchaseId: string;
  partnerId: string;
  refundId: string;
  couponIds: string[];
  amountCents: number;
  /** An operator's refund of coupons the rules keep. */
  forced: boolean;
  /** As recorded: pending until its outcome is. */
  state: RefundState;
  /** The charge the money goes back from; null when none went through the processor (a claimed reservation). */
  chargeId: string | null;
}

/** What the refund came to, as the purchase records it. */
export type RefundOutcome = { outcome: 'succeeded'; processorRefundId: string | null } | { outcome: 'failed'; reason: string };

type Nothing = Record<string, never>;

/** What happens to a refund while it is settled: its reading, then each step's result. */
export type RefundWorkflowInput =
  | { type: 'RefundSettling'; data: RefundToSettle }
  | { type: 'CouponsHeld'; data: Nothing }
  | { type: 'CouponsRefused'; data: { reason: string } }
  | { type: 'ChargeRefunded'; data: { processorRefundId: string } }
  | { type: 'ChargeRefundRefused'; data: { reason: string } }
  | { type: 'ChargeRefundUnanswered'; data: { reason: string } }
  /** The outcome written, and the refund's state after it (another settler's, had it written first). */
  | { type: 'OutcomeRecorded'; data: { state: RefundState } }
  | { type: 'CouponsFinished'; data: Nothing };

/** The steps of a refund's settling, each idempotent: its settling job may take them again. */
export type RefundWorkflowCommand =
  /** Holds every coupon of the refund from redemption, all or none (one unit of work). */
  | { type: 'HoldCoupons'; data: { refundId: string; partnerId: string; couponIds: string[]; forced: boolean } }
  /** The money back through the processor, under the refund's own key. */
  | { type: 'RefundCharge'; data: { chargeId: string; amountCents: number; idempotencyKey: string } }
  | { type: 'RecordOutcome'; data: { purchaseId: string; partnerId: string; refundId: string } & RefundOutcome }
  /** Voids the coupons (succeeded) or gives them back (failed), all in one unit of work. */
  | { type: 'FinishCoupons'; data: { refundId: string; couponIds: string[]; outcome: 'succeeded' | 'released' } };

export interface RefundWorkflowState {
  refund: RefundToSettle | null;
  /** Where the refund stands: as read, then as recorded. */
  state: RefundState;
  /** The processor gave no answer this time: the refund stays pending, and its job asks again. */
  unanswered: boolean;
  couponsFinished: boolean;
}

/** The processor's idempotency key of a refund: one per refund, however often it is asked. */
export const refundProcessorKey = (refundId: string) => `refund-${refundId}`;

const record = (refund: RefundToSettle, outcome: RefundOutcome): RefundWorkflowCommand => ({
  type: 'RecordOutcome',
  data: { purchaseId: refund.purchaseId, partnerId: refund.partnerId, refundId: refund.refundId, ...outcome },
});

const finish = (refund: RefundToSettle, state: RefundState): RefundWorkflowCommand[] =>
  state === 'pending'
    ? []
    : [
        {
          type: 'FinishCoupons',
          data: { refundId: refund.refundId, couponIds: refund.couponIds, outcome: state === 'succeeded' ? 'succeeded' : 'released' },
        },
      ];

/**
 * A refund's settling, from its decision on the purchase to its end, as one pure workflow: its
 * coupons held from redemption (all or none: a coupon redeemed since the request was checked fails
 * the refund with its reason, and none is left held), the money back through the processor (none
 * when nothing went through it, a claimed reservation's, or a free coupon's), the outcome recorded
 * on the purchase, then its coupons voided or given back as the recorded outcome says. A processor
 * that does not answer leaves the refund pending for its job to settle later. A refund read already
 * ended (a settling stopped after its outcome) only finishes its coupons.
 */
export const refundWorkflow: Workflow<RefundWorkflowInput, RefundWorkflowState, RefundWorkflowCommand> = {
  initialState: () => ({ refund: null, state: 'pending', unanswered: false, couponsFinished: false }),

  decide(input, { refund, state }) {
    if (!refund) return [];
    switch (input.type) {
      case 'RefundSettling':
        if (state !== 'pending') return finish(refund, state);
        return [
          {
            type: 'HoldCoupons',
            data: { refundId: refund.refundId, partnerId: refund.partnerId, couponIds: refund.couponIds, forced: refund.forced },
          },
        ];
      case 'CouponsHeld':
        if (refund.chargeId === null || refund.amountCents === 0)
          return [record(refund, { outcome: 'succeeded', processorRefundId: null })];
        return [
          {
            type: 'RefundCharge',
            data: { chargeId: refund.chargeId, amountCents: refund.amountCents, idempotencyKey: refundProcessorKey(refund.refundId) },
          },
        ];
      case 'CouponsRefused':
      case 'ChargeRefundRefused':
        return [record(refund, { outcome: 'failed', reason: input.data.reason })];
      case 'ChargeRefunded':
        return [record(refund, { outcome: 'succeeded', processorRefundId: input.data.processorRefundId })];
      case 'OutcomeRecorded':
        return finish(refund, state);
      default:
        return [];
    }
  },

  evolve(state, message) {
    switch (message.type) {
      case 'RefundSettling':
        return { ...state, refund: message.data, state: message.data.state };
      case 'ChargeRefundUnanswered':
        return { ...state, unanswered: true };
      case 'OutcomeRecorded':
        return { ...state, state: message.data.state };
      case 'CouponsFinished':
        return { ...state, couponsFinished: true };
      default:
        return state;
    }
  },
};
