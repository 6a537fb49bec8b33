import { NotFound, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import fc from 'fast-check';
import { purchaseDecider, RequestRefund } from '../purchase/purchase.decider';
import { PurchaseEvent } from '../purchase/purchase.events';
import { couponShares } from './refund-rules';

const now = new Date('2026-06-15T12:00:00Z');
const at = now.toISOString();

describe('coupon shares', () => {
  it('splits the amount evenly, the cents left over one each to the first coupons', () => {
    expect([...couponShares(1000, ['p-1', 'p-2', 'p-3']).values()]).toEqual([334, 333, 333]);
    expect([...couponShares(2500 * 2, ['p-1', 'p-2']).values()]).toEqual([2500, 2500]);
    expect([...couponShares(2, ['p-1', 'p-2', 'p-3']).values()]).toEqual([1, 1, 0]);
  });
  it('adds up to the amount exactly, for any amount and number of coupons', () =>
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 1, max: 1000 }), (amount, n) => {
        const shares = [
          ...couponShares(
            amount,
            Array.from({ length: n }, (_, i) => `p-${i + 1}`),
          ).values(),
        ];
        expect(shares.reduce((a, b) => a + b, 0)).toBe(amount);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }),
    ));
});

describe('purchase refunds', () => {
  const given = deciderSpec(purchaseDecider);
  const deal = { dealId: 'd1', title: 'Spa', type: 'daily-deal', imageUrl: null, unitPrice: 1000, expiresAt: null, expirationDays: null };
  const reserved = (payment = true): PurchaseEvent => ({
    type: 'PurchaseReserved',
    data: {
      purchaseId: 'p1',
      partnerId: 'a',
      deal,
      quantity: 3,
      holdId: 'p1',
      reservedAt: at,
      holdExpiresAt: at,
      ...(payment ? { payment: { userId: 'u1', creditCardId: 'c1', sessionId: null } } : {}),
    },
  });
  const paid: PurchaseEvent = {
    type: 'PurchasePaid',
    data: {
      purchaseId: 'p1',
      userId: 'u1',
      creditCardId: 'c1',
      amountCents: 3000,
      chargeId: 'ch_1',
      holdId: 'p1',
      couponIds: ['p1-1', 'p1-2', 'p1-3'],
      sessionId: null,
      paidAt: at,
    },
  };
  const request = (refundId: string, couponIds: string[], partnerId = 'a'): RequestRefund => ({
    type: 'RequestRefund',
    data: { purchaseId: 'p1', partnerId, refundId, couponIds, reason: 'requested_by_customer', note: null, forced: false },
  });
  const requested = (refundId: string, couponIds: string[], amountCents: number): PurchaseEvent => ({
    type: 'RefundRequested',
    data: {
      refundId,
      purchaseId: 'p1',
      partnerId: 'a',
      userId: 'u1',
      couponIds,
      amountCents,
      reason: 'requested_by_customer',
      note: null,
      forced: false,
      requestedAt: at,
    },
  });
  const failed = (refundId: string): PurchaseEvent => ({
    type: 'RefundFailed',
    data: { refundId, purchaseId: 'p1', reason: 'refused', settledAt: at },
  });

  it('refunds coupons of a paid purchase, each its share of what was paid; asked again, the refund is the one made', () => {
    given([reserved(), paid])
      .when(request('r1', ['p1-2', 'p1-3']), now)
      .then([requested('r1', ['p1-2', 'p1-3'], 2000)]);
    given([reserved(), paid, requested('r1', ['p1-2', 'p1-3'], 2000)])
      .when(request('r1', ['p1-2', 'p1-3']), now)
      .then([]);
  });
  it('never refunds a coupon twice, nor one of another purchase, nor the same coupon twice in one refund', () => {
    const after = [reserved(), paid, requested('r1', ['p1-1'], 1000)];
    given(after)
      .when(request('r2', ['p1-1']), now)
      .thenThrows(ValidationFailed, { message: 'coupon_ids names a coupon that is already part of another refund' });
    given(after)
      .when(request('r2', ['p2-1']), now)
      .thenThrows(ValidationFailed, { message: 'coupon_ids names a coupon that is not one of this purchase' });
    given(after)
      .when(request('r2', ['p1-2', 'p1-2']), now)
      .thenThrows(ValidationFailed, { message: 'coupon_ids names a coupon twice' });
    given(after).when(request('r2', []), now).thenThrows(ValidationFailed);
  });
  it('refunds the coupons of a failed refund again', () =>
    given([reserved(), paid, requested('r1', ['p1-1'], 1000), failed('r1')])
      .when(request('r2', ['p1-1']), now)
      .then([requested('r2', ['p1-1'], 1000)]));
  it("refuses a purchase not paid, a reseller's sale, and another partner's", () => {
    given([reserved()])
      .when(request('r1', ['p1-1']), now)
      .thenThrows(ValidationFailed, { message: 'id is reserved: only a paid purchase is refunded' });
    given([reserved(), paid])
      .when(request('r1', ['p1-1'], 'b'), now)
      .thenThrows(NotFound);
    const resale = { ...reserved(false), data: { ...(reserved(false).data as object), via: 'reseller' } } as PurchaseEvent;
    given([resale])
      .when(request('r1', ['p1-1']), now)
      .thenThrows(ValidationFailed);
  });
  it('records the outcome once', () => {
    const outcome = {
      type: 'RecordRefundOutcome' as const,
      data: { purchaseId: 'p1', partnerId: 'a', refundId: 'r1', outcome: 'succeeded' as const, processorRefundId: 're_1' },
    };
    const succeeded: PurchaseEvent = {
      type: 'RefundSucceeded',
      data: { refundId: 'r1', purchaseId: 'p1', processorRefundId: 're_1', settledAt: at },
    };
    given([reserved(), paid, requested('r1', ['p1-1'], 1000)])
      .when(outcome, now)
      .then([succeeded]);
    given([reserved(), paid, requested('r1', ['p1-1'], 1000), succeeded])
      .when(outcome, now)
      .then([]);
    given([reserved(), paid]).when(outcome, now).thenThrows(NotFound);
  });
});
