import { RecordedEvent } from '@deals/kernel';
import { SettlementLine, settlementLinesProjection } from './settlement-lines.projection';

let position = 0;
const event = (type: string, data: Record<string, unknown>): RecordedEvent =>
  ({
    id: `e${++position}`,
    type,
    data,
    metadata: { partnerId: 'p1' },
    streamId: 's',
    revision: 0,
    position: String(position).padStart(8, '0'),
    createdAt: '2026-06-15T12:00:00.000Z',
  }) as unknown as RecordedEvent;

/** Folds `events` into the line of each document they touch. */
function fold(events: RecordedEvent[]): Map<string, SettlementLine> {
  const lines = new Map<string, SettlementLine>();
  for (const e of events)
    for (const id of settlementLinesProjection.documentIds(e)) {
      const after = settlementLinesProjection.evolve(lines.get(id) ?? null, e, id);
      if (after) lines.set(id, { ...after, _id: id, _pos: e.position });
    }
  return lines;
}

const AT = '2026-06-15T23:59:00.000Z';
const reserved = event('PurchaseReserved', { purchaseId: 'x', partnerId: 'p1' });
const begun = () => event('ChargeBegun', { userId: 'u', purchaseId: 'x', at: AT });

describe('settlement lines: what may still be booked on a day', () => {
  it("holds a reserved purchase's day from its charge's start until its sale is booked, across the charge's end", () => {
    expect(fold([reserved, begun()]).get('sale:x')).toMatchObject({ blocking: true, pendingDay: '2026-06-15', booked: false });
    const ended = event('ChargeEnded', { userId: 'u', purchaseId: 'x', saleFollows: true });
    expect(fold([begun(), reserved, ended]).get('sale:x')).toMatchObject({ blocking: true });
    const paid = event('PurchasePaid', { purchaseId: 'x', amountCents: 100, paidAt: AT });
    expect(fold([reserved, begun(), ended, paid]).get('sale:x')).toMatchObject({ blocking: false, booked: true, day: '2026-06-15' });
  });

  it('lets the day go once the charge ends with no sale to follow, the purchase is not paid, or nothing was reserved', () => {
    const ended = event('ChargeEnded', { userId: 'u', purchaseId: 'x' });
    expect(fold([reserved, begun(), ended]).get('sale:x')).toMatchObject({ blocking: false });
    const notPaid = event('PurchaseNotPaid', { purchaseId: 'x', outcome: 'declined', reason: 'declined' });
    expect(fold([reserved, begun(), notPaid]).get('sale:x')).toMatchObject({ blocking: false });
    expect(fold([begun()]).get('sale:x')).toMatchObject({ blocking: false });
    expect(fold([reserved]).get('sale:x')).toMatchObject({ blocking: false });
  });

  it('holds a refund’s day from its request until it is settled, succeeded or failed', () => {
    const asked = event('RefundRequested', { refundId: 'r', purchaseId: 'x', partnerId: 'p1', amountCents: 50, requestedAt: AT });
    expect(fold([asked]).get('refund:r')).toMatchObject({ blocking: true, pendingDay: '2026-06-15' });
    const done = event('RefundSucceeded', { refundId: 'r', purchaseId: 'x', processorRefundId: null, settledAt: AT });
    expect(fold([asked, done]).get('refund:r')).toMatchObject({ blocking: false, booked: true });
    const failed = event('RefundFailed', { refundId: 'r', purchaseId: 'x', reason: 'no', settledAt: AT });
    expect(fold([asked, failed]).get('refund:r')).toMatchObject({ blocking: false, booked: false });
  });
});
