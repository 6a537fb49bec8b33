import { applyEvents, RecordedEvent } from '@deals/kernel';
import { fulfillmentStateAt, PurchaseDetails, purchaseDetailsProjection } from './purchase-details.projection';

let n = 0;
const recorded = (type: string, data: unknown): RecordedEvent => ({
  id: `e${++n}`,
  type,
  data,
  metadata: { occurredAt: '2026-06-15T12:00:00Z' },
  streamId: 's',
  revision: 0,
  position: String(n).padStart(20, '0'),
});
const deal = { dealId: 'spa', title: 'Spa', type: 'daily-deal', imageUrl: null, unitPrice: 4900, expiresAt: null, expirationDays: 30 };
const reserved = (purchaseId: string, extra: Record<string, unknown> = {}) =>
  recorded('PurchaseReserved', {
    purchaseId,
    partnerId: 'p',
    deal,
    quantity: 1,
    holdId: purchaseId,
    reservedAt: '2026-06-15T12:00:00Z',
    holdExpiresAt: '2026-06-15T12:05:00Z',
    ...extra,
  });
const sold = (holdId: string) => recorded('UnitsSold', { dealId: 'spa', holdId, quantity: 1 });

/** Folds `events` into the documents, one event at a time, as a live run may. */
function fold(events: RecordedEvent[]): Map<string, PurchaseDetails> {
  const views = new Map<string, PurchaseDetails>();
  for (const event of events) for (const view of applyEvents(purchaseDetailsProjection, views, [event])) views.set(view._id, view);
  return views;
}
const inProgress = (views: Map<string, PurchaseDetails>) =>
  [...views.values()]
    .filter((v) => v.saleInProgress)
    .map((v) => v._id)
    .sort();

describe('purchase details projection: sales in progress, for start-up recovery', () => {
  it('marks a reservation from the sale of its hold, or of the hold its claim took in its place, until it is claimed', () => {
    const views = fold([reserved('held'), reserved('lapsed'), reserved('untouched'), sold('held'), sold('lapsed-r')]);
    expect(inProgress(views)).toEqual(['held', 'lapsed']);
    const after = fold([
      reserved('held'),
      sold('held'),
      recorded('PurchaseClaimed', {
        purchaseId: 'held',
        partnerId: 'p',
        userId: 'u',
        holdId: 'held',
        amountCents: 4900,
        couponIds: ['held-1'],
      }),
    ]);
    expect(inProgress(after)).toEqual([]);
  });

  it('marks a released reservation whose claim sold fresh units', () => {
    const views = fold([reserved('gone'), recorded('PurchaseReleased', { purchaseId: 'gone', partnerId: 'p' }), sold('gone-r')]);
    expect([views.get('gone')?.fulfillmentState, views.get('gone')?.saleInProgress]).toEqual(['released', true]);
  });

  it('marks a reseller sale from its reservation until it is resold', () => {
    const events = [reserved('resale', { via: 'reseller', transactionReference: 'tx-1' }), sold('resale')];
    expect(inProgress(fold(events))).toEqual(['resale']);
    const resold = recorded('PurchaseResold', {
      purchaseId: 'resale',
      partnerId: 'p',
      holdId: 'resale',
      transactionReference: 'tx-1',
      amountCents: 4900,
      couponIds: ['resale-1'],
    });
    expect(inProgress(fold([...events, resold]))).toEqual([]);
  });

  it('never marks a card purchase (settled from its payment intent), nor a sale of a hold no purchase owns', () => {
    const card = reserved('card', { payment: { userId: 'u', creditCardId: 'c' } });
    const views = fold([card, sold('card'), sold('nobody'), sold('nobody-r')]);
    expect(inProgress(views)).toEqual([]);
    expect([...views.keys()]).toEqual(['card']);
  });
});

describe('purchase details: a reservation whose hold lapsed', () => {
  const expiry = Date.parse('2026-06-15T12:05:00Z');
  const stateAt = (events: RecordedEvent[], id: string, at: number) => fulfillmentStateAt(fold(events).get(id)!, at);

  it('reads released from its hold expiry on, with no event of the lapse', () => {
    expect(stateAt([reserved('r')], 'r', expiry - 1)).toBe('reserved');
    expect(stateAt([reserved('r')], 'r', expiry)).toBe('released');
    expect(fold([reserved('r')]).get('r')!.fulfillmentState).toBe('reserved');
  });

  it('stays released while a claim after the lapse sells it fresh units, and reads fulfilled once claimed', () => {
    const events = [reserved('late'), sold('late-r')];
    expect(stateAt(events, 'late', expiry + 1)).toBe('released');
    const claimed = recorded('PurchaseClaimed', {
      purchaseId: 'late',
      userId: 'u',
      holdId: 'late-r',
      amountCents: 4900,
      couponIds: ['late-1'],
    });
    expect(stateAt([...events, claimed], 'late', expiry + 1)).toBe('fulfilled');
  });

  it('never lapses once its own hold was sold to it (a claim of the live hold, recorded after the expiry)', () => {
    expect(stateAt([reserved('held'), sold('held')], 'held', expiry + 1)).toBe('reserved');
  });

  it('leaves a card purchase and a reseller sale as they are: they settle on their own paths', () => {
    const card = reserved('card', { payment: { userId: 'u', creditCardId: 'c' } });
    const resale = reserved('resale', { via: 'reseller', transactionReference: 'tx-1' });
    expect(stateAt([card], 'card', expiry + 1)).toBe('reserved');
    expect(stateAt([resale], 'resale', expiry + 1)).toBe('reserved');
  });
});
