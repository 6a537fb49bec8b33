import { workflowSpec } from '@deals/testing';
import { RefundToSettle, refundWorkflow, RefundWorkflowInput } from './refund.workflow';

type Input = RefundWorkflowInput;
const given = workflowSpec(refundWorkflow);
const none = {} as Record<string, never>;

const refund: RefundToSettle = {
  purchaseId: 'p1',
  partnerId: 'P',
  refundId: 'r1',
  couponIds: ['c1', 'c2'],
  amountCents: 3000,
  forced: false,
  state: 'pending',
  chargeId: 'ch1',
};
const settling = (changes: Partial<RefundToSettle> = {}): Input => ({ type: 'RefundSettling', data: { ...refund, ...changes } });
const held: Input = { type: 'CouponsHeld', data: none };
const recorded = (state: RefundToSettle['state']): Input => ({ type: 'OutcomeRecorded', data: { state } });
const identity = { purchaseId: 'p1', partnerId: 'P', refundId: 'r1' };

describe('refund workflow', () => {
  it('holds all its coupons in one step first', () => {
    given()
      .when(settling())
      .then([{ type: 'HoldCoupons', data: { refundId: 'r1', partnerId: 'P', couponIds: ['c1', 'c2'], forced: false } }]);
  });

  it('pays the money back under the refund’s own key once the coupons are held, records it, then voids the coupons', () => {
    given(settling())
      .when(held)
      .then([{ type: 'RefundCharge', data: { chargeId: 'ch1', amountCents: 3000, idempotencyKey: 'refund-r1' } }]);
    given(settling(), held)
      .when({ type: 'ChargeRefunded', data: { processorRefundId: 're_1' } })
      .then([{ type: 'RecordOutcome', data: { ...identity, outcome: 'succeeded', processorRefundId: 're_1' } }]);
    const state = given(settling(), held, { type: 'ChargeRefunded', data: { processorRefundId: 're_1' } })
      .when(recorded('succeeded'))
      .then([{ type: 'FinishCoupons', data: { refundId: 'r1', couponIds: ['c1', 'c2'], outcome: 'succeeded' } }]);
    expect(state.state).toBe('succeeded');
  });

  it('records a refund with nothing to pay back through the processor as succeeded at once', () => {
    for (const nothing of [{ chargeId: null }, { amountCents: 0 }])
      given(settling(nothing))
        .when(held)
        .then([{ type: 'RecordOutcome', data: { ...identity, outcome: 'succeeded', processorRefundId: null } }]);
  });

  it('fails the refund with the reason when a coupon cannot be held, and gives its coupons back', () => {
    given(settling())
      .when({ type: 'CouponsRefused', data: { reason: 'c2: the coupon is in a non-refundable state' } })
      .then([{ type: 'RecordOutcome', data: { ...identity, outcome: 'failed', reason: 'c2: the coupon is in a non-refundable state' } }]);
    given(settling(), { type: 'CouponsRefused', data: { reason: 'c2: redeemed' } })
      .when(recorded('failed'))
      .then([{ type: 'FinishCoupons', data: { refundId: 'r1', couponIds: ['c1', 'c2'], outcome: 'released' } }]);
  });

  it('fails the refund the processor refuses', () => {
    given(settling(), held)
      .when({ type: 'ChargeRefundRefused', data: { reason: 'the charge was disputed' } })
      .then([{ type: 'RecordOutcome', data: { ...identity, outcome: 'failed', reason: 'the charge was disputed' } }]);
  });

  it('leaves the refund pending, its coupons held, when the processor does not answer', () => {
    const state = given(settling(), held)
      .when({ type: 'ChargeRefundUnanswered', data: { reason: 'timed out' } })
      .then([]);
    expect(state).toMatchObject({ state: 'pending', unanswered: true, couponsFinished: false });
  });

  it('finishes the coupons as the recorded outcome says, another settler’s if it wrote first', () => {
    given(settling(), held, { type: 'ChargeRefunded', data: { processorRefundId: 're_1' } })
      .when(recorded('failed'))
      .then([{ type: 'FinishCoupons', data: { refundId: 'r1', couponIds: ['c1', 'c2'], outcome: 'released' } }]);
  });

  it('only finishes the coupons of a refund read already ended (a settling stopped after its outcome)', () => {
    given()
      .when(settling({ state: 'succeeded' }))
      .then([{ type: 'FinishCoupons', data: { refundId: 'r1', couponIds: ['c1', 'c2'], outcome: 'succeeded' } }]);
    given()
      .when(settling({ state: 'failed' }))
      .then([{ type: 'FinishCoupons', data: { refundId: 'r1', couponIds: ['c1', 'c2'], outcome: 'released' } }]);
    const state = given(settling({ state: 'failed' }))
      .when({ type: 'CouponsFinished', data: none })
      .then([]);
    expect(state).toMatchObject({ state: 'failed', couponsFinished: true });
  });
});
