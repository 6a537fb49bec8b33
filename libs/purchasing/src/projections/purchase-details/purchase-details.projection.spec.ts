import { projectionSpec, SpecEvent } from '@deals/testing';
import { fulfillmentStateAt, PurchaseDetails, purchaseDetailsProjection } from './purchase-details.projection';

const spec = projectionSpec(purchaseDetailsProjection, { occurredAt: '2026-06-15T12:00:00Z' });
const event = (type: string, data: unknown): SpecEvent => ({ type, data });
const deal = { dealId: 'spa', title: 'Spa', type: 'daily-deal', imageUrl: null, unitPrice: 4900, expiresAt: null, expirationDays: 30 };
const reserved = (purchaseId: string, extra: Record<string, unknown> = {}) =>
  event('PurchaseReserved', {
    purchaseId,
    partnerId: 'p',
    deal,
    quantity: 1,
    holdId: purchaseId,
    reservedAt: '2026-06-15T12:00:00Z',
    holdExpiresAt: '2026-06-15T12:05:00Z',
    ...extra,
  });
const sold = (holdId: string) => event('UnitsSold', { dealId: 'spa', holdId, quantity: 1 });
const inProgress = (views: Map<string, PurchaseDetails>) =>
  [...views.values()]
    .filter((v) => v.saleInProgress)
    .map((v) => v._id)
    .sort();

describe('purchase details projection: sales in progress, for start-up recovery', () => {
  it('marks a reservation from the sale of its hold, or of the hold its claim took in its place, until it is claimed', () => {
    const views = spec.given(reserved('held'), reserved('lapsed'), reserved('untouched'), sold('held'), sold('lapsed-r')).documents();
    expect(inProgress(views)).toEqual(['held', 'lapsed']);
    const after = spec
      .given(
        reserved('held'),
        sold('held'),
        event('PurchaseClaimed', {
          purchaseId: 'held',
          partnerId: 'p',
          userId: 'u',
          holdId: 'held',
          amountCents: 4900,
          couponIds: ['held-1'],
        }),
      )
      .documents();
    expect(inProgress(after)).toEqual([]);
  });

  it('marks a released reservation whose claim sold fresh units', () => {
    const views = spec
      .given(reserved('gone'), event('PurchaseReleased', { purchaseId: 'gone', partnerId: 'p' }), sold('gone-r'))
      .documents();
    expect([views.get('gone')?.fulfillmentState, views.get('gone')?.saleInProgress]).toEqual(['released', true]);
  });

  it('marks a reseller sale from its reservation until it is resold', () => {
    const events = [reserved('resale', { via: 'reseller', transactionReference: 'tx-1' }), sold('resale')];
    expect(inProgress(spec.given(...events).documents())).toEqual(['resale']);
    const resold = event('PurchaseResold', {
      purchaseId: 'resale',
      partnerId: 'p',
      holdId: 'resale',
      transactionReference: 'tx-1',
      amountCents: 4900,
      couponIds: ['resale-1'],
    });
    expect(inProgress(spec.given(...events, resold).documents())).toEqual([]);
  });

  it('never marks a card purchase (settled from its payment intent), nor a sale of a hold no purchase owns', () => {
    const card = reserved('card', { payment: { userId: 'u', creditCardId: 'c' } });
    const views = spec.given(card, sold('card'), sold('nobody'), sold('nobody-r')).documents();
    expect(inProgress(views)).toEqual([]);
    expect([...views.keys()]).toEqual(['card']);
  });
});

describe('purchase details: a reservation whose hold lapsed', () => {
  const expiry = Date.parse('2026-06-15T12:05:00Z');
  const stateAt = (events: SpecEvent[], id: string, at: number) => fulfillmentStateAt(spec.given(...events).document(id), at);

  it('reads released from its hold expiry on, with no event of the lapse', () => {
    expect(stateAt([reserved('r')], 'r', expiry - 1)).toBe('reserved');
    expect(stateAt([reserved('r')], 'r', expiry)).toBe('released');
    expect(spec.given(reserved('r')).document('r').fulfillmentState).toBe('reserved');
  });

  it('stays released while a claim after the lapse sells it fresh units, and reads fulfilled once claimed', () => {
    const events = [reserved('late'), sold('late-r')];
    expect(stateAt(events, 'late', expiry + 1)).toBe('released');
    const claimed = event('PurchaseClaimed', {
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

describe('purchase details projection: a gift', () => {
  const payment = { userId: 'payer', creditCardId: 'c1', sessionId: null };
  const gift = { userId: 'recipient', name: 'Ann', message: 'Happy birthday', deliverAt: '2026-06-20T09:00:00.000Z' };
  const paid = event('PurchasePaid', {
    purchaseId: 'g',
    userId: 'payer',
    creditCardId: 'c1',
    amountCents: 4900,
    chargeId: 'ch1',
    holdId: 'g',
    couponIds: ['g-1'],
    sessionId: null,
    paidAt: '2026-06-15T12:00:01Z',
  });
  const mailed = event('GiftMailed', { purchaseId: 'g', outcome: 'kept', reason: null, mailedAt: '2026-06-20T09:00:00.000Z' });

  it("lists it among the payer's purchases with its recipient and delivery time, never its name or message", () => {
    const view = spec.given(reserved('g', { payment, gift }), paid).documents().get('g')!;
    expect(view).toMatchObject({
      userId: 'payer',
      gift: { recipientUserId: 'recipient', deliverAt: '2026-06-20T09:00:00.000Z', mail: 'scheduled', mailedAt: null },
      giftMailDue: true,
    });
    expect(JSON.stringify(view)).not.toMatch(/Ann|Happy birthday/);
  });

  it('shows its mail once recorded, and is due no more', () => {
    const view = spec.given(reserved('g', { payment, gift }), paid, mailed).documents().get('g')!;
    expect(view.gift).toEqual({
      recipientUserId: 'recipient',
      deliverAt: gift.deliverAt,
      mail: 'kept',
      mailedAt: '2026-06-20T09:00:00.000Z',
    });
    expect(view).not.toHaveProperty('giftMailDue');
  });

  it('is never due for its mail unless paid: a declined gift is never mailed', () => {
    const declined = event('PurchaseNotPaid', { purchaseId: 'g', outcome: 'declined', reason: 'stolen card' });
    const view = spec.given(reserved('g', { payment, gift }), declined).documents().get('g')!;
    expect([view.gift?.mail, view.giftMailDue]).toEqual(['not_sent', undefined]);
  });
});
