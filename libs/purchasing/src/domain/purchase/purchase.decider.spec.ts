import { NotFound, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import { fold } from '@deals/kernel';
import { purchaseDecider } from './purchase.decider';
import { PurchaseEvent } from './purchase.events';

const given = deciderSpec(purchaseDecider);
const now = new Date('2026-06-15T12:00:00Z');
const deal = { dealId: 'd1', title: 'Spa', type: 'daily-deal', imageUrl: null, unitPrice: 2500, expiresAt: null, expirationDays: null };
const reserved: PurchaseEvent = {
  type: 'PurchaseReserved',
  data: {
    purchaseId: 'p1',
    partnerId: 'a',
    deal,
    quantity: 2,
    holdId: 'p1',
    reservedAt: now.toISOString(),
    holdExpiresAt: '2026-06-15T12:05:00.000Z',
  },
};
const claimed = (userId: string, holdId = 'p1'): PurchaseEvent => ({
  type: 'PurchaseClaimed',
  data: { purchaseId: 'p1', userId, holdId, amountCents: 5000, couponIds: ['p1-1', 'p1-2'], claimedAt: now.toISOString() },
});
const claim = (userId: string, partnerId = 'a', holdId = 'p1') => ({
  type: 'ClaimPurchase' as const,
  data: { purchaseId: 'p1', partnerId, userId, holdId },
});
const release = (partnerId = 'a') => ({ type: 'ReleasePurchase' as const, data: { purchaseId: 'p1', partnerId } });

describe('purchase decider', () => {
  describe('none', () => {
    it('is reserved', () =>
      given([])
        .when({ type: 'ReservePurchase', data: reserved.data as never }, now)
        .then([reserved]));
    it('cannot be claimed or released', () => {
      given([]).when(claim('u1'), now).thenThrows(NotFound);
      given([]).when(release(), now).thenThrows(NotFound);
    });
  });
  describe('reserved', () => {
    it('is claimed for a user: the amount and one coupon per unit', () =>
      given([reserved])
        .when(claim('u1'), now)
        .then([claimed('u1')]));
    it('is claimed on a new hold when its own lapsed', () =>
      given([reserved])
        .when(claim('u1', 'a', 'p1-r1'), now)
        .then([claimed('u1', 'p1-r1')]));
    it('is released', () =>
      given([reserved])
        .when(release(), now)
        .then([{ type: 'PurchaseReleased', data: { purchaseId: 'p1', reason: 'released' } }]));
    it("is another partner's: not found", () => given([reserved]).when(claim('u1', 'b'), now).thenThrows(NotFound));
  });
  describe('not a reservation', () => {
    const card: PurchaseEvent = {
      ...reserved,
      data: { ...(reserved.data as object), payment: { userId: 'u1', creditCardId: 'c1', sessionId: null } },
    } as PurchaseEvent;
    const resale: PurchaseEvent = { ...reserved, data: { ...(reserved.data as object), via: 'reseller' } } as PurchaseEvent;
    it('is reserved once when a resale is sent twice at once; any other second reservation is refused', () => {
      given([resale])
        .when({ type: 'ReservePurchase', data: resale.data as never }, now)
        .then([]);
      given([card])
        .when({ type: 'ReservePurchase', data: card.data as never }, now)
        .thenThrows(ValidationFailed, { message: 'id is already reserved' });
      given([reserved])
        .when({ type: 'ReservePurchase', data: resale.data as never }, now)
        .thenThrows(ValidationFailed, { message: 'id is already reserved' });
    });
    it('is neither claimed nor released: a card purchase or a resale completes on its own path', () => {
      for (const start of [card, resale]) {
        given([start])
          .when(claim('u1'), now)
          .thenThrows(ValidationFailed, { message: 'id is not a reservation: only a reserved purchase is claimed or released' });
        given([start])
          .when(release(), now)
          .thenThrows(ValidationFailed, { message: 'id is not a reservation: only a reserved purchase is claimed or released' });
      }
    });
  });
  describe('fulfilled', () => {
    it('changes nothing when claimed again by the same user', () =>
      given([reserved, claimed('u1')])
        .when(claim('u1'), now)
        .then([]));
    it('refuses another user and a release', () => {
      given([reserved, claimed('u1')])
        .when(claim('u2'), now)
        .thenThrows(ValidationFailed);
      given([reserved, claimed('u1')])
        .when(release(), now)
        .thenThrows(ValidationFailed);
    });
  });
  describe('released', () => {
    it('changes nothing when released again', () =>
      given([reserved, { type: 'PurchaseReleased', data: { purchaseId: 'p1', reason: 'released' } }])
        .when(release(), now)
        .then([]));
  });
  describe("a reseller sale's buyer", () => {
    const resale: PurchaseEvent = {
      ...reserved,
      data: { ...(reserved.data as object), via: 'reseller', transactionReference: 'tx-1' },
    } as PurchaseEvent;
    const resold: PurchaseEvent = {
      type: 'PurchaseResold',
      data: {
        purchaseId: 'p1',
        partnerId: 'a',
        holdId: 'p1',
        transactionReference: 'tx-1',
        transactionDate: '2026-06-15T11:59:00Z',
        amountCents: 4000,
        buyer: { first_name: 'Ann', last_name: 'Lee' },
        couponIds: ['p1-1', 'p1-2'],
        resoldAt: now.toISOString(),
      },
    };
    const erase = (partnerId: string | null = 'a') => ({
      type: 'EraseResaleBuyer' as const,
      data: { purchaseId: 'p1', partnerId, by: partnerId === null ? ('operator' as const) : ('partner' as const) },
    });
    const erased = (by: 'partner' | 'operator' = 'partner'): PurchaseEvent => ({
      type: 'ResaleBuyerErased',
      data: { purchaseId: 'p1', partnerId: 'a', transactionReference: 'tx-1', by, erasedAt: now.toISOString() },
    });

    it('is erased by its partner, or an operator, naming the transaction whose key goes', () => {
      given([resale, resold]).when(erase(), now).then([erased()]);
      given([resale, resold])
        .when(erase(null), now)
        .then([erased('operator')]);
      // A sale still being recorded too: what is written of it from then on is without its buyer.
      given([resale]).when(erase(), now).then([erased()]);
    });
    it('is erased once: asked again, nothing more is recorded', () => given([resale, resold, erased()]).when(erase(), now).then([]));
    it("is another partner's, or no sale at all: not found", () => {
      given([resale, resold]).when(erase('b'), now).thenThrows(NotFound);
      given([]).when(erase(), now).thenThrows(NotFound);
    });
    it("is a user's when the purchase is not a reseller's: refused", () => {
      given([reserved, claimed('u1')])
        .when(erase(), now)
        .thenThrows(ValidationFailed);
    });
  });
  describe('a gift', () => {
    const gift = { userId: 'r1', name: 'Ann', message: 'Happy birthday', deliverAt: '2026-06-20T09:00:00.000Z' };
    const giftReserved: PurchaseEvent = {
      ...reserved,
      data: { ...(reserved.data as object), payment: { userId: 'u1', creditCardId: 'c1', sessionId: null }, gift },
    } as PurchaseEvent;
    const paid: PurchaseEvent = {
      type: 'PurchasePaid',
      data: {
        purchaseId: 'p1',
        userId: 'u1',
        creditCardId: 'c1',
        amountCents: 5000,
        chargeId: 'ch1',
        holdId: 'p1',
        couponIds: ['p1-1', 'p1-2'],
        sessionId: null,
        paidAt: now.toISOString(),
      },
    };
    const mail = (outcome: 'sent' | 'kept' | 'not_sent' = 'sent', partnerId = 'a') => ({
      type: 'RecordGiftMail' as const,
      data: { purchaseId: 'p1', partnerId, outcome, reason: null },
    });
    const mailed: PurchaseEvent = {
      type: 'GiftMailed',
      data: { purchaseId: 'p1', outcome: 'sent', reason: null, mailedAt: now.toISOString() },
    };

    it("names its people by role: its recipient holds the coupons, the card's user pays", () => {
      const purchase = fold(purchaseDecider, [giftReserved, paid]);
      expect(purchase).toMatchObject({ status: 'fulfilled', holder: 'r1', charge: { payer: 'u1', chargeId: 'ch1' } });
    });
    it("is refunded to its payer: the refund is the payer's, its money back to the card charged", () =>
      given([giftReserved, paid])
        .when(
          {
            type: 'RequestRefund',
            data: {
              purchaseId: 'p1',
              partnerId: 'a',
              refundId: 'rf1',
              couponIds: ['p1-1'],
              reason: 'requested_by_customer',
              note: null,
              forced: false,
            },
          },
          now,
        )
        .then([
          {
            type: 'RefundRequested',
            data: {
              refundId: 'rf1',
              purchaseId: 'p1',
              partnerId: 'a',
              userId: 'u1',
              couponIds: ['p1-1'],
              amountCents: 2500,
              reason: 'requested_by_customer',
              note: null,
              forced: false,
              requestedAt: now.toISOString(),
            },
          },
        ]));
    it('records its mail once paid, once', () => {
      given([giftReserved, paid]).when(mail(), now).then([mailed]);
      given([giftReserved, paid, mailed]).when(mail('not_sent'), now).then([]);
    });
    it("records no mail of a gift not paid, of a purchase that is no gift, or of another partner's", () => {
      given([giftReserved]).when(mail(), now).thenThrows(ValidationFailed, { message: 'id is reserved: only a paid gift is mailed' });
      const card = { ...giftReserved, data: { ...(giftReserved.data as object), gift: undefined } } as PurchaseEvent;
      given([card, paid]).when(mail(), now).thenThrows(ValidationFailed, { message: 'id is not a gift' });
      given([giftReserved, paid]).when(mail('sent', 'b'), now).thenThrows(NotFound);
    });
  });
});
