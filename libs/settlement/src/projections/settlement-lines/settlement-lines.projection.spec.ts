import { projectionSpec, SpecEvent } from '@deals/testing';
import { settlementLinesProjection } from './settlement-lines.projection';

const spec = projectionSpec(settlementLinesProjection, { occurredAt: '2026-06-15T12:00:00.000Z', metadata: { partnerId: 'p1' } });
const event = (type: string, data: Record<string, unknown>): SpecEvent => ({ type, data });

const AT = '2026-06-15T23:59:00.000Z';
const reserved = event('PurchaseReserved', { purchaseId: 'x', partnerId: 'p1' });
const begun = () => event('ChargeBegun', { userId: 'u', purchaseId: 'x', at: AT });

describe('settlement lines: what may still be booked on a day', () => {
  it("holds a reserved purchase's day from its charge's start until its sale is booked, across the charge's end", () => {
    spec.given(reserved, begun()).thenDocumentMatches('sale:x', { blocking: true, pendingDay: '2026-06-15', booked: false });
    const ended = event('ChargeEnded', { userId: 'u', purchaseId: 'x', saleFollows: true });
    spec.given(begun(), reserved, ended).thenDocumentMatches('sale:x', { blocking: true });
    const paid = event('PurchasePaid', { purchaseId: 'x', amountCents: 100, paidAt: AT });
    spec.given(reserved, begun(), ended, paid).thenDocumentMatches('sale:x', { blocking: false, booked: true, day: '2026-06-15' });
  });

  it('lets the day go once the charge ends with no sale to follow, the purchase is not paid, or nothing was reserved', () => {
    const ended = event('ChargeEnded', { userId: 'u', purchaseId: 'x' });
    spec.given(reserved, begun(), ended).thenDocumentMatches('sale:x', { blocking: false });
    const notPaid = event('PurchaseNotPaid', { purchaseId: 'x', outcome: 'declined', reason: 'declined' });
    spec.given(reserved, begun(), notPaid).thenDocumentMatches('sale:x', { blocking: false });
    spec.given(begun()).thenDocumentMatches('sale:x', { blocking: false });
    spec.given(reserved).thenDocumentMatches('sale:x', { blocking: false });
  });

  it('holds a refund’s day from its request until it is settled, succeeded or failed', () => {
    const asked = event('RefundRequested', { refundId: 'r', purchaseId: 'x', partnerId: 'p1', amountCents: 50, requestedAt: AT });
    spec.given(asked).thenDocumentMatches('refund:r', { blocking: true, pendingDay: '2026-06-15' });
    const done = event('RefundSucceeded', { refundId: 'r', purchaseId: 'x', processorRefundId: null, settledAt: AT });
    spec.given(asked, done).thenDocumentMatches('refund:r', { blocking: false, booked: true });
    const failed = event('RefundFailed', { refundId: 'r', purchaseId: 'x', reason: 'no', settledAt: AT });
    spec.given(asked, failed).thenDocumentMatches('refund:r', { blocking: false, booked: false });
  });
});
