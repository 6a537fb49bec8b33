import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventStore, handleCommand, ManualClock, PaymentGateway, sandboxOf, Scheduler, underTestClock } from '@deals/kernel';
import { holdPartnerUnits } from '@deals/purchasing/commands/purchase-steps/partner-inventory';
import { inventoryDecider } from '@deals/purchasing/domain/inventory/inventory.decider';
import { buyerKey, inventoryStream } from '@deals/purchasing/domain/inventory/inventory.events';
import { purchaseDecider } from '@deals/purchasing/domain/purchase/purchase.decider';
import { purchaseStream } from '@deals/purchasing/domain/purchase/purchase.events';
import { transactionReferenceDecider, transactionReferenceStream } from '@deals/purchasing/domain/purchase/resale-claim';
import { CHARGE_LOCK_MS } from '@deals/purchasing/domain/charge-lock/charge-lock';
import { RecoverInterruptedPayments } from '@deals/purchasing/reactions/recover-interrupted-payments.reaction';
import { TestApi, TestApiOptions } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { tempDir } from '../../support/temp-dir';
import { buyerWithCard, REFUND_LATE_TEST_CARD } from '../../support/test-cards';

/** The spa day as a purchase records it (its deal snapshot). */
const SPA_DAY_SNAPSHOT = {
  dealId: spaDay.id,
  title: 'Spa day for two',
  type: 'daily-deal',
  imageUrl: null,
  unitPrice: 4900,
  expiresAt: null,
  expirationDays: null,
};

/**
 * A process that dies between charging a card and recording the sale leaves a reservation with a
 * payment intent and a charge at the processor. The next start finishes it from the processor's
 * record: no charge without coupons, no unit lost.
 */
describe('recovery of card purchases interrupted by a crash', () => {
  // Two starts of the service in most tests, and states awaited up to a ceiling that means hung (eventually's).
  jest.setTimeout(60_000);
  const dir = tempDir('recovery');
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  afterAll(() => dir.remove());
  const start = (options: TestApiOptions) => TestApi.start(options);

  /**
   * `before` on a service over a fresh data folder, then the stop (what a crash leaves is what
   * `before` wrote), then `after` on a new service over the same folder, once its views are settled.
   */
  async function acrossRestart<T>(
    name: string,
    before: (api: TestApi) => Promise<T>,
    after: (api: TestApi, made: T) => Promise<void>,
  ): Promise<void> {
    const folder = tempDir(name);
    try {
      const first = await start({ dataDir: folder.path, clock });
      let made: T;
      try {
        made = await before(first);
      } finally {
        await first.stop();
      }
      const second = await start({ dataDir: folder.path, clock });
      try {
        await second.settle();
        await after(second, made);
      } finally {
        await second.stop();
      }
    } finally {
      folder.remove();
    }
  }

  it('completes a charged purchase and releases an uncharged one on the next start', async () => {
    const first = await start({ dataDir: dir.path, clock });
    const partner = await first.createPartner();
    await first.importRegions([chicago]);
    await first.importDeals([{ ...spaDay, quantity: 10 }]);
    const userId = (await first.call('POST', '/users', { apiKey: partner.apiKey, body: { email: 'crash@example.com' } })).body.user_id;
    const cardId = (
      await first.call('POST', '/credit_cards', {
        apiKey: partner.apiKey,
        body: { user_id: userId, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    const store = first.get(EventStore);
    const gateway = first.get(PaymentGateway);
    const token = (await first.get(EventStore).readStream(`card-${cardId}`))[0].data as { token: string };
    const context = { now: clock.now(), metadata: { actor: 'test', partnerId: partner.partnerId } };
    const deal = SPA_DAY_SNAPSHOT;
    for (const [purchaseId, charge] of [
      ['charged-p', true],
      ['uncharged-p', false],
    ] as const) {
      await handleCommand(
        store,
        inventoryStream('chicago-spa-day'),
        inventoryDecider,
        { type: 'HoldUnits', data: { dealId: 'chicago-spa-day', holdId: purchaseId, quantity: 2 } },
        context,
      );
      await handleCommand(
        store,
        purchaseStream(purchaseId),
        purchaseDecider,
        {
          type: 'ReservePurchase',
          data: {
            purchaseId,
            partnerId: partner.partnerId,
            deal,
            quantity: 2,
            holdId: purchaseId,
            reservedAt: clock.now().toISOString(),
            holdExpiresAt: '2026-06-15T12:05:00.000Z',
            payment: { userId, creditCardId: cardId, sessionId: null },
          },
        },
        context,
      );
      if (charge)
        expect((await gateway.charge({ token: token.token, amountCents: 9800, idempotencyKey: purchaseId, description: 'x' })).status).toBe(
          'approved',
        );
    }
    await first.settle();
    expect((await first.call('GET', '/deals/chicago-spa-day', { apiKey: partner.apiKey })).body.deal.num_left).toBe(6);
    await first.stop(); // the "crash": nothing after the charge was recorded

    const second = await start({ dataDir: dir.path, clock });
    try {
      await second.settle();
      const charged = (await second.call('GET', '/purchases/charged-p', { apiKey: partner.apiKey })).body.purchase;
      expect(charged).toMatchObject({ payment_state: 'charged', fulfillment_state: 'fulfilled', user_id: userId, credit_card_id: cardId });
      expect(charged.coupons).toHaveLength(2);
      const uncharged = (await second.call('GET', '/purchases/uncharged-p', { apiKey: partner.apiKey })).body.purchase;
      expect(uncharged).toMatchObject({ payment_state: 'failed', fulfillment_state: 'released', coupons: [] });
      const figures = (await second.call('GET', '/deals/chicago-spa-day', { apiKey: partner.apiKey })).body.deal;
      expect([figures.num_left, figures.number_sold]).toEqual([8, 2]);
      expect(await second.get(PaymentGateway).chargeOutcome('uncharged-p')).toBeNull();
    } finally {
      await second.stop();
    }
  });

  it('issues the coupons of a fulfilled purchase whose process stopped before issuing them', async () => {
    const crashDir = tempDir('recovery-coupons');
    try {
      const first = await start({ dataDir: crashDir.path, clock });
      const partner = await first.createPartner();
      await first.importRegions([chicago]);
      await first.importDeals([{ ...spaDay, quantity: 10 }]);
      const userId = (await first.call('POST', '/users', { apiKey: partner.apiKey, body: { email: 'owed@example.com' } })).body.user_id;
      const store = first.get(EventStore);
      const context = { now: clock.now(), metadata: { actor: 'test', partnerId: partner.partnerId } };
      const deal = {
        dealId: 'chicago-spa-day',
        title: 'Spa day for two',
        type: 'daily-deal',
        imageUrl: null,
        unitPrice: 4900,
        expiresAt: null,
        expirationDays: 30,
      };
      // What a claim does up to the crash: hold, reserve, sell, record the claim; no coupon issued.
      await handleCommand(
        store,
        inventoryStream('chicago-spa-day'),
        inventoryDecider,
        { type: 'HoldUnits', data: { dealId: 'chicago-spa-day', holdId: 'owed-p', quantity: 3 } },
        context,
      );
      await handleCommand(
        store,
        purchaseStream('owed-p'),
        purchaseDecider,
        {
          type: 'ReservePurchase',
          data: {
            purchaseId: 'owed-p',
            partnerId: partner.partnerId,
            deal,
            quantity: 3,
            holdId: 'owed-p',
            reservedAt: clock.now().toISOString(),
            holdExpiresAt: '2026-06-15T12:05:00.000Z',
          },
        },
        context,
      );
      await handleCommand(
        store,
        inventoryStream('chicago-spa-day'),
        inventoryDecider,
        { type: 'SellHeldUnits', data: { dealId: 'chicago-spa-day', holdId: 'owed-p' } },
        context,
      );
      await handleCommand(
        store,
        purchaseStream('owed-p'),
        purchaseDecider,
        { type: 'ClaimPurchase', data: { purchaseId: 'owed-p', partnerId: partner.partnerId, userId, holdId: 'owed-p' } },
        context,
      );
      await first.settle();
      expect((await first.call('GET', '/purchases/owed-p', { apiKey: partner.apiKey })).body.purchase.coupons).toEqual([]);
      await first.stop();

      const second = await start({ dataDir: crashDir.path, clock });
      try {
        await second.settle();
        const purchase = (await second.call('GET', '/purchases/owed-p', { apiKey: partner.apiKey })).body.purchase;
        expect(purchase).toMatchObject({ fulfillment_state: 'fulfilled', user_id: userId });
        expect(purchase.coupons).toHaveLength(3);
        const coupons = (await second.call('GET', `/users/${userId}/coupons`, { apiKey: partner.apiKey })).body.coupons;
        expect(coupons).toHaveLength(3);
        const figures = (await second.call('GET', '/deals/chicago-spa-day', { apiKey: partner.apiKey })).body.deal;
        expect([figures.num_left, figures.number_sold]).toEqual([7, 3]);
      } finally {
        await second.stop();
      }
    } finally {
      crashDir.remove();
    }
  });

  /** A card purchase interrupted after an approved charge, with its hold, as the crash leaves it. */
  async function chargedBeforeCrash(api: TestApi, partnerId: string, purchaseId: string, quantity: number, limit?: number) {
    const store = api.get(EventStore);
    const gateway = api.get(PaymentGateway);
    const email = `${purchaseId}@example.com`;
    const userId = (await api.call('POST', '/users', { apiKey: partnerKeys.get(partnerId)!, body: { email } })).body.user_id;
    const cardId = (
      await api.call('POST', '/credit_cards', {
        apiKey: partnerKeys.get(partnerId)!,
        body: { user_id: userId, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    const { token } = (await store.readStream(`card-${cardId}`))[0].data as { token: string };
    const context = { now: clock.now(), metadata: { actor: 'test', partnerId } };
    const deal = SPA_DAY_SNAPSHOT;
    await handleCommand(
      store,
      purchaseStream(purchaseId),
      purchaseDecider,
      {
        type: 'ReservePurchase',
        data: {
          purchaseId,
          partnerId,
          deal,
          quantity,
          holdId: purchaseId,
          reservedAt: clock.now().toISOString(),
          holdExpiresAt: new Date(clock.now().getTime() + 300_000).toISOString(),
          payment: { userId, creditCardId: cardId, sessionId: null },
        },
      },
      context,
    );
    // As a card purchase holds: for its buyer, within the deal's per-user limit.
    const hold = { dealId: 'chicago-spa-day', holdId: purchaseId, quantity, buyer: buyerKey(partnerId, userId), maxPerBuyer: limit };
    await handleCommand(store, inventoryStream('chicago-spa-day'), inventoryDecider, { type: 'HoldUnits', data: hold }, context);
    const charge = await gateway.charge({ token, amountCents: 4900 * quantity, idempotencyKey: purchaseId, description: 'x' });
    if (charge.status !== 'approved') throw new Error('the test card should approve');
    return { chargeId: charge.chargeId, userId, cardId };
  }
  const partnerKeys = new Map<string, string>();

  it('sells a charged purchase whose hold lapsed while it was down on fresh units counted for its buyer: the per-user limit still holds', async () => {
    const crashDir = tempDir('recovery-limit');
    try {
      const first = await start({ dataDir: crashDir.path, clock });
      const partner = await first.createPartner();
      partnerKeys.set(partner.partnerId, partner.apiKey);
      await first.importRegions([chicago]);
      await first.importDeals([{ ...spaDay, quantity: 10, max_per_user: 2 }]);
      const { userId, cardId } = await chargedBeforeCrash(first, partner.partnerId, 'limit-p', 2, 2);
      await first.stop();
      clock.advance(5 * 60_000 + 1000);
      const second = await start({ dataDir: crashDir.path, clock });
      try {
        await second.settle();
        const key = { apiKey: partner.apiKey };
        expect((await second.call('GET', '/purchases/limit-p', key)).body.purchase).toMatchObject({
          payment_state: 'charged',
          fulfillment_state: 'fulfilled',
          number_bought: 2,
        });
        const sales = (await second.get(EventStore).readStream(inventoryStream('chicago-spa-day')))
          .filter((e) => e.type === 'UnitsSold')
          .map((e) => e.data);
        expect(sales).toEqual([expect.objectContaining({ holdId: 'limit-p-r', quantity: 2, buyer: buyerKey(partner.partnerId, userId) })]);
        const more = await second.call('POST', '/purchases', {
          ...key,
          body: { deal_id: 'chicago-spa-day', quantity: 1, user_id: userId, credit_card_id: cardId, expected_price_per_unit: 4900 },
        });
        expect([more.status, more.body.error_msg]).toEqual([422, 'at most 2 per user; already bought 2']);
      } finally {
        await second.stop();
      }
    } finally {
      clock.set('2026-06-15T12:00:00Z');
      crashDir.remove();
    }
  });

  it("finishes at start a claim stopped between its sale and its record, for the buyer its sale names, on the reservation's hold or its replacement", () =>
    acrossRestart(
      'recovery-claim',
      async (first) => {
        const partner = await first.createPartner();
        await first.importRegions([chicago]);
        await first.importDeals([
          { ...spaDay, quantity: 10, max_per_user: 3 },
          { ...spaDay, id: 'chicago-spa-later', quantity: 10, max_per_user: undefined },
        ]);
        const key = { apiKey: partner.apiKey };
        const userId = (await first.call('POST', '/users', { ...key, body: { email: 'claimed@example.com' } })).body.user_id;
        const reserve = async (dealId: string, units: number) =>
          (await first.call('POST', '/purchases/reserve', { ...key, body: { deal_id: dealId, num_bought: units } })).body.purchase
            .id as string;
        const onHold = await reserve('chicago-spa-day', 2);
        const lapsed = await reserve('chicago-spa-later', 1);
        const released = await reserve('chicago-spa-later', 1);
        expect((await first.call('PUT', `/purchases/${released}/release`, key)).status).toBe(200);
        const store = first.get(EventStore);
        const context = { now: clock.now(), metadata: { actor: 'test', partnerId: partner.partnerId } };
        const buyer = buyerKey(partner.partnerId, userId);
        const later = (command: Parameters<typeof inventoryDecider.decide>[0]) =>
          handleCommand(store, inventoryStream('chicago-spa-later'), inventoryDecider, command, context);
        // What a claim wrote before the stop: the units sold to the buyer, nothing on the purchase.
        await handleCommand(
          store,
          inventoryStream('chicago-spa-day'),
          inventoryDecider,
          { type: 'SellHeldUnits', data: { dealId: 'chicago-spa-day', holdId: onHold, buyer, maxPerBuyer: 3 } },
          context,
        );
        // A claim after the reservation lapsed, and one of the released reservation: fresh units held
        // and sold for the buyer (the deal then paused).
        await later({ type: 'ReleaseHold', data: { dealId: 'chicago-spa-later', holdId: lapsed, reason: 'released' } });
        for (const id of [lapsed, released]) {
          await later({ type: 'HoldUnits', data: { dealId: 'chicago-spa-later', holdId: `${id}-r`, quantity: 1, buyer } });
          await later({ type: 'SellHeldUnits', data: { dealId: 'chicago-spa-later', holdId: `${id}-r` } });
        }
        await first.importDeals([{ ...spaDay, id: 'chicago-spa-later', state: 'paused', quantity: 10, max_per_user: undefined }]);
        return { key, userId, onHold, lapsed, released };
      },
      async (second, { key, userId, onHold, lapsed, released }) => {
        for (const [id, units] of [
          [onHold, 2],
          [lapsed, 1],
          [released, 1],
        ] as const) {
          const purchase = (await second.call('GET', `/purchases/${id}`, key)).body.purchase;
          expect([id, purchase.fulfillment_state, purchase.user_id, purchase.coupons.length]).toEqual([id, 'fulfilled', userId, units]);
        }
        expect((await second.call('GET', `/users/${userId}/purchases?count=true`, key)).body.count).toBe(3);
        // The units count for the buyer once, and the deal's counts agree with the purchases.
        expect((await second.call('GET', '/deals/chicago-spa-day', key)).body.deal).toMatchObject({ number_sold: 2, num_left: 8 });
        const sales = (await second.get(EventStore).readStream(inventoryStream('chicago-spa-later'))).filter((e) => e.type === 'UnitsSold');
        expect(sales).toHaveLength(2);
      },
    ));

  it('finishes at start a reseller sale stopped after its units were taken, with the terms kept under its reference', () =>
    acrossRestart(
      'recovery-resale',
      async (first) => {
        const partner = await first.createPartner();
        await first.importRegions([chicago]);
        await first.importDeals([{ ...spaDay, quantity: 10, max_per_user: undefined }]);
        const store = first.get(EventStore);
        const context = { now: clock.now(), metadata: { actor: 'test', partnerId: partner.partnerId } };
        const terms = { amountCents: 9000, transactionDate: '2026-06-15T11:59:00Z', buyer: { first_name: 'Ray', last_name: 'Sell' } };
        const reference = transactionReferenceStream(partner.partnerId, 'tx-stopped');
        // What the sale wrote before the stop: its claim, its hold, the mark, its purchase, the units sold; not the resale.
        await handleCommand(
          store,
          reference,
          transactionReferenceDecider,
          {
            type: 'ClaimTransactionReference',
            data: {
              partnerId: partner.partnerId,
              transactionReference: 'tx-stopped',
              purchaseId: 'resold-p',
              dealId: 'chicago-spa-day',
              quantity: 2,
              terms,
            },
          },
          context,
        );
        await handleCommand(
          store,
          inventoryStream('chicago-spa-day'),
          inventoryDecider,
          { type: 'HoldUnits', data: { dealId: 'chicago-spa-day', holdId: 'resold-p', quantity: 2 } },
          context,
        );
        await handleCommand(
          store,
          reference,
          transactionReferenceDecider,
          { type: 'MarkResaleSelling', data: { purchaseId: 'resold-p' } },
          context,
        );
        await handleCommand(
          store,
          purchaseStream('resold-p'),
          purchaseDecider,
          {
            type: 'ReservePurchase',
            data: {
              purchaseId: 'resold-p',
              partnerId: partner.partnerId,
              quantity: 2,
              holdId: 'resold-p',
              reservedAt: clock.now().toISOString(),
              holdExpiresAt: '2026-06-15T12:05:00.000Z',
              deal: {
                dealId: 'chicago-spa-day',
                title: 'Spa day for two',
                type: 'daily-deal',
                imageUrl: null,
                unitPrice: 4900,
                expiresAt: null,
                expirationDays: 30,
              },
              via: 'reseller',
              transactionReference: 'tx-stopped',
            },
          },
          context,
        );
        await handleCommand(
          store,
          inventoryStream('chicago-spa-day'),
          inventoryDecider,
          { type: 'SellHeldUnits', data: { dealId: 'chicago-spa-day', holdId: 'resold-p' } },
          context,
        );
        return { partner, terms };
      },
      async (second, { partner, terms }) => {
        const basic = { username: partner.username, password: partner.password };
        const resold = (await second.get(EventStore).readStream(purchaseStream('resold-p'))).find((e) => e.type === 'PurchaseResold');
        expect(resold?.data).toMatchObject({
          transactionReference: 'tx-stopped',
          amountCents: 9000,
          transactionDate: '2026-06-15T11:59:00Z',
          buyer: terms.buyer,
          couponIds: ['resold-p-1', 'resold-p-2'],
        });
        expect((await second.call('GET', '/api/v3/coupons/resold-p-1', { basic })).status).toBe(200);
        expect((await second.call('GET', '/deals/chicago-spa-day', { apiKey: partner.apiKey })).body.deal).toMatchObject({
          number_sold: 2,
          num_left: 8,
        });
        // The reseller's retry answers the sale recorded, and records nothing new.
        const retry = await second.call('POST', '/api/v3/resellers/purchases', {
          basic,
          body: {
            deal_id: 'chicago-spa-day',
            quantity: 2,
            transaction_reference: 'tx-stopped',
            transaction_date: '2026-06-15T11:59:00Z',
            transaction_amount: 9000,
            first_name: 'Ray',
            last_name: 'Sell',
          },
        });
        expect([retry.status, retry.body.id, retry.body.coupons?.length]).toEqual([200, 'resold-p', 2]);
        expect(
          (await second.get(EventStore).readStream(purchaseStream('resold-p'))).filter((e) => e.type === 'PurchaseResold'),
        ).toHaveLength(1);
      },
    ));

  it('closes without selling a charge that was refunded before the crash, and refunds one whose units sold out while it was down', async () => {
    const crashDir = tempDir('recovery-refunds');
    try {
      const first = await start({ dataDir: crashDir.path, clock });
      const partner = await first.createPartner();
      partnerKeys.set(partner.partnerId, partner.apiKey);
      await first.importRegions([chicago]);
      await first.importDeals([{ ...spaDay, quantity: 3, max_per_user: undefined }]);
      // 1: its units could not be sold, so it was refunded; the crash came before it was closed.
      const refunded = await chargedBeforeCrash(first, partner.partnerId, 'refunded-p', 1);
      expect(
        (await first.get(PaymentGateway).refund({ chargeId: refunded.chargeId, amountCents: 4900, idempotencyKey: 'refunded-p-refund' }))
          .status,
      ).toBe('refunded');
      // 2: charged for two units, then the crash; before recovery finishes it, its hold lapses and
      // another buyer takes every unit (done here, in the "crashed" process, after its last write).
      await chargedBeforeCrash(first, partner.partnerId, 'lapsed-p', 2);
      clock.advance(5 * 60_000 + 1);
      const key = { apiKey: partner.apiKey };
      const other = (await first.call('POST', '/users', { ...key, body: { email: 'meanwhile@example.com' } })).body.user_id;
      const reservation = await first.call('POST', '/purchases/reserve', { ...key, body: { deal_id: 'chicago-spa-day', num_bought: 3 } });
      expect(reservation.status).toBe(200);
      expect(
        (await first.call('PUT', `/purchases/${reservation.body.purchase.id}/claim`, { ...key, body: { user_id: other } })).status,
      ).toBe(200);
      await first.settle();
      await first.stop();

      const second = await start({ dataDir: crashDir.path, clock });
      try {
        await second.settle();
        for (const id of ['refunded-p', 'lapsed-p']) {
          const purchase = (await second.call('GET', `/purchases/${id}`, key)).body.purchase;
          expect([id, purchase.payment_state, purchase.fulfillment_state, purchase.coupons]).toEqual([id, 'failed', 'released', []]);
          expect([id, await second.get(PaymentGateway).refundOutcome(`${id}-refund`)]).toEqual([
            id,
            expect.objectContaining({ status: 'refunded' }),
          ]);
        }
        const figures = (await second.call('GET', '/deals/chicago-spa-day', key)).body.deal;
        expect([figures.number_sold, figures.num_left]).toEqual([3, 0]);
      } finally {
        await second.stop();
      }
    } finally {
      crashDir.remove();
    }
  });

  /** A running API with one card purchase charged and left unrecorded (as a crash leaves it). */
  const startWithChargedPurchase = async (purchaseId: string) => {
    const api = await start({ clock });
    const partner = await api.createPartner();
    partnerKeys.set(partner.partnerId, partner.apiKey);
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, quantity: 5, max_per_user: undefined }]);
    await chargedBeforeCrash(api, partner.partnerId, purchaseId, 1);
    await api.settle();
    return { api, partner };
  };

  it('arms a job to try again when the processor cannot be asked at start, instead of waiting for the next start', async () => {
    const { api, partner } = await startWithChargedPurchase('unasked-p');
    try {
      const unreachable = jest.spyOn(api.get(PaymentGateway), 'chargeOutcome').mockRejectedValueOnce(new Error('connect ECONNREFUSED'));
      const armed = jest.spyOn(api.get(Scheduler), 'schedule');
      try {
        expect(await api.get(RecoverInterruptedPayments).run({ othersMayBeBuying: false })).toBe(0);
        const job = armed.mock.calls.map(([j]) => j).find((j) => j.id === 'recover-purchase-unasked-p-1');
        expect(job).toMatchObject({
          kind: 'recover-purchase',
          runAt: new Date(clock.now().getTime() + 60_000),
          data: { purchaseId: 'unasked-p', attempt: 1 },
        });
        await api.get(Scheduler).schedule({ ...job!, runAt: clock.now() });
        const state = async () =>
          (await api.call('GET', '/purchases/unasked-p', { apiKey: partner.apiKey })).body.purchase.fulfillment_state;
        expect(await eventually(state, (s) => s !== 'reserved')).toBe('fulfilled');
      } finally {
        unreachable.mockRestore();
        armed.mockRestore();
      }
    } finally {
      await api.close();
    }
  });

  it('beside other processes that may be buying, leaves a purchase younger than the charge lock to later', async () => {
    const { api, partner } = await startWithChargedPurchase('in-flight-p');
    try {
      const recovery = api.get(RecoverInterruptedPayments);
      const state = async () =>
        (await api.call('GET', '/purchases/in-flight-p', { apiKey: partner.apiKey })).body.purchase.fulfillment_state;
      // A worker starting now: an API process may still be charging it.
      expect(await recovery.run({ othersMayBeBuying: true })).toBe(0);
      expect(await state()).toBe('reserved');
      // Past its charge lock, nobody is: the worker finishes it.
      clock.advance(CHARGE_LOCK_MS + 1);
      expect(await recovery.run({ othersMayBeBuying: true })).toBe(1);
      await api.settle();
      expect(await state()).toBe('fulfilled');
    } finally {
      await api.close();
    }
  });

  it("settles a test clock's interrupted purchase in the clock's time: beside other processes, once an advance passes its charge lock", async () => {
    const api = await start({ clock });
    try {
      const partner = await api.createPartner();
      const test = partner.sandbox!.apiKey;
      await api.importRegions([chicago]);
      await api.importDeals([{ ...spaDay, quantity: 5, max_per_user: undefined }]);
      const made = await api.call('POST', '/v1/test_clocks', { apiKey: test, body: { frozen_time: '2027-02-01T10:00:00Z' } });
      const clockId = made.body.test_clock.id as string;
      const headers = { 'deals-test-clock': clockId };
      const userId = (await api.call('POST', '/users', { apiKey: test, headers, body: { email: 'clocked-crash@example.com' } })).body
        .user_id;
      const cardId = (
        await api.call('POST', '/credit_cards', {
          apiKey: test,
          headers,
          body: { user_id: userId, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
        })
      ).body.credit_card_id;
      // What a process under the clock left when it died after the charge: a reservation, its hold, the processor's record.
      const partnerId = underTestClock(sandboxOf(partner.partnerId), clockId);
      const store = api.get(EventStore);
      const { token } = (await store.readStream(`card-${cardId}`))[0].data as { token: string };
      const at = new Date('2027-02-01T10:00:00Z');
      const context = { now: at, metadata: { actor: 'test', partnerId } };
      const deal = SPA_DAY_SNAPSHOT;
      await handleCommand(
        store,
        purchaseStream('clocked-p'),
        purchaseDecider,
        {
          type: 'ReservePurchase',
          data: {
            purchaseId: 'clocked-p',
            partnerId,
            deal,
            quantity: 1,
            holdId: 'clocked-p',
            reservedAt: at.toISOString(),
            holdExpiresAt: new Date(at.getTime() + 300_000).toISOString(),
            payment: { userId, creditCardId: cardId, sessionId: null },
          },
        },
        context,
      );
      const hold = { dealId: spaDay.id, holdId: 'clocked-p', quantity: 1, buyer: buyerKey(partnerId, userId) };
      await holdPartnerUnits(store, { type: 'HoldUnits', data: hold }, partnerId, context);
      const charge = await api.get(PaymentGateway).charge({ token, amountCents: 4900, idempotencyKey: 'clocked-p', description: 'x' });
      expect(charge.status).toBe('approved');
      await api.settle();
      const purchase = async () => (await api.call('GET', '/purchases/clocked-p', { apiKey: test, headers })).body.purchase;
      // However long ago in real time, by the clock it is younger than its charge lock: left to a job that waits on the clock.
      clock.advance(10 * CHARGE_LOCK_MS);
      expect(await api.get(RecoverInterruptedPayments).run({ othersMayBeBuying: true })).toBe(0);
      await api.settle();
      expect((await purchase()).fulfillment_state).toBe('reserved');
      const advanced = await api.call('POST', `/v1/test_clocks/${clockId}/advance`, {
        apiKey: test,
        body: { frozen_time: '2027-02-01T10:03:00Z' },
      });
      expect(advanced.status).toBe(200);
      // Settled once its coupons are issued too (they are written after the sale, on streams of their
      // own): a read between the two shows the purchase fulfilled with none yet.
      await eventually(purchase, (p) => p.coupons?.length > 0);
      // Its coupons are another view's, folded apart from the purchase's: every view caught up first.
      await api.settle();
      const settled = await purchase();
      expect(settled).toMatchObject({ payment_state: 'charged', fulfillment_state: 'fulfilled' });
      expect(settled.coupons).toHaveLength(1);
      // Settled at the end of its charge lock by the clock.
      await api.settle();
      const events = (await api.call('GET', '/v1/events?resource_id=clocked-p', { apiKey: test, headers })).body.events;
      expect(events.map((e: { type: string; created_at: string }) => [e.type, e.created_at])).toContainEqual([
        'purchase.completed',
        new Date(at.getTime() + CHARGE_LOCK_MS).toISOString(),
      ]);
    } finally {
      await api.close();
    }
  });

  it('releases at start a hold no purchase was recorded for (a reseller sale stopped between its hold and its purchase), and only one old enough beside other processes', async () => {
    const crashDir = tempDir('recovery-abandoned');
    try {
      const first = await start({ dataDir: crashDir.path, clock });
      const partner = await first.createPartner();
      await first.importRegions([chicago]);
      await first.importDeals([{ ...spaDay, quantity: 10, max_per_user: undefined }]);
      const store = first.get(EventStore);
      const context = { now: clock.now(), metadata: { actor: 'test', partnerId: partner.partnerId } };
      const hold = (holdId: string, quantity: number) =>
        handleCommand(
          store,
          inventoryStream('chicago-spa-day'),
          inventoryDecider,
          { type: 'HoldUnits', data: { dealId: 'chicago-spa-day', holdId, quantity } },
          context,
        );
      // A reseller sale stopped after claiming its reference and taking its hold, and a reservation whose purchase was recorded.
      await handleCommand(
        store,
        transactionReferenceStream(partner.partnerId, 'tx-crash'),
        transactionReferenceDecider,
        {
          type: 'ClaimTransactionReference',
          data: { partnerId: partner.partnerId, transactionReference: 'tx-crash', purchaseId: 'abandoned-p' },
        },
        context,
      );
      await hold('abandoned-p', 3);
      await hold('owned-r', 2); // a purchase id may end in -r: base64url
      await handleCommand(
        store,
        purchaseStream('owned-r'),
        purchaseDecider,
        {
          type: 'ReservePurchase',
          data: {
            purchaseId: 'owned-r',
            partnerId: partner.partnerId,
            quantity: 2,
            holdId: 'owned-r',
            reservedAt: clock.now().toISOString(),
            holdExpiresAt: '2026-06-15T12:05:00.000Z',
            deal: {
              dealId: 'chicago-spa-day',
              title: 'Spa day for two',
              type: 'daily-deal',
              imageUrl: null,
              unitPrice: 4900,
              expiresAt: null,
              expirationDays: 30,
            },
          },
        },
        context,
      );
      await first.settle();
      expect((await first.call('GET', '/deals/chicago-spa-day', { apiKey: partner.apiKey })).body.deal.num_left).toBe(5);
      // A worker starting beside running APIs leaves a hold younger than the charge lock: its purchase may be being written.
      expect(await first.get(RecoverInterruptedPayments).run({ othersMayBeBuying: true })).toBe(0);
      await first.stop();

      // The service's own log says what recovery did (Nest's buffered lines once went nowhere).
      const logFile = join(crashDir.path, 'service.log');
      const second = await start({ dataDir: crashDir.path, clock, env: { LOG_LEVEL: 'warn', LOG_FILE: logFile } });
      try {
        await second.settle();
        const said = readFileSync(logFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { context?: string; msg?: string });
        expect(said).toContainEqual(
          expect.objectContaining({
            context: 'Recovery',
            msg: 'released hold abandoned-p of deal chicago-spa-day: no purchase was recorded for it',
          }),
        );
        expect((await second.call('GET', '/deals/chicago-spa-day', { apiKey: partner.apiKey })).body.deal.num_left).toBe(8);
        const log = await second.get(EventStore).readStream(inventoryStream('chicago-spa-day'));
        const released = log.filter((e) => e.type === 'UnitsReleased');
        const held = log.find((e) => e.type === 'UnitsHeld' && (e.data as { holdId: string }).holdId === 'abandoned-p')!;
        expect(released.map((e) => e.data)).toEqual([
          {
            dealId: 'chicago-spa-day',
            holdId: 'abandoned-p',
            quantity: 3,
            expiresAt: (held.data as { expiresAt: string }).expiresAt,
            reason: 'abandoned',
          },
        ]);
        expect(released[0].metadata).toMatchObject({ actor: 'system:recovery' });
        // The reseller's retry finishes the sale on fresh units.
        const retry = await second.call('POST', '/api/v3/resellers/purchases', {
          basic: { username: partner.username, password: partner.password },
          body: {
            deal_id: 'chicago-spa-day',
            quantity: 3,
            transaction_reference: 'tx-crash',
            transaction_date: '2026-06-15T11:59:00Z',
            transaction_amount: 14700,
            first_name: 'Ray',
            last_name: 'Sell',
          },
        });
        expect([retry.status, retry.body.id, retry.body.fulfillment_state, retry.body.coupons?.length]).toEqual([
          200,
          'abandoned-p',
          'fulfilled',
          3,
        ]);
        await second.settle();
        expect((await second.call('GET', '/deals/chicago-spa-day', { apiKey: partner.apiKey })).body.deal).toMatchObject({
          num_left: 5,
          number_sold: 3,
        });
      } finally {
        await second.stop();
      }
    } finally {
      crashDir.remove();
    }
  });

  it('settles after a restart the refunds a stop left pending, each paid back once: one whose processor answer was lost, one never asked', async () => {
    await acrossRestart(
      'recovery-refunds',
      async (api) => {
        const { apiKey } = await api.createPartner();
        await api.importRegions([chicago]);
        await api.importDeals([{ ...spaDay, quantity: 10, max_per_user: undefined }]);
        const caller = { call: (method: string, path: string, body?: unknown) => api.call(method, path, { apiKey, body }) };
        const late = await buyerWithCard(caller, apiKey, 'late@example.com', REFUND_LATE_TEST_CARD);
        const plain = await buyerWithCard(caller, apiKey, 'plain@example.com');
        const buy = async (who: { userId: string; cardId: string }) =>
          (
            await caller.call('POST', '/purchases', {
              deal_id: spaDay.id,
              quantity: 1,
              user_id: who.userId,
              credit_card_id: who.cardId,
              expected_price_per_unit: spaDay.current_price,
            })
          ).body.purchase.id as string;
        const lost = await buy(late);
        const unasked = await buy(plain);
        expect((await caller.call('POST', `/purchases/${lost}/refunds`, { reason: 'duplicate' })).body.refund.state).toBe('pending');
        // The process stops after recording the refund, before asking the processor.
        const gateway = api.get(PaymentGateway);
        const refund = jest.spyOn(gateway, 'refund').mockRejectedValueOnce(new Error('the process stopped'));
        expect((await caller.call('POST', `/purchases/${unasked}/refunds`, { reason: 'duplicate' })).status).toBe(500);
        expect(refund).toHaveBeenCalledTimes(1);
        refund.mockRestore();
        return { apiKey, lost, unasked };
      },
      async (api, { apiKey, lost, unasked }) => {
        // The start armed their jobs (in this process's memory); run again to see them, then run them now.
        const armed = jest.spyOn(api.get(Scheduler), 'schedule');
        try {
          expect(await api.get(RecoverInterruptedPayments).run({ othersMayBeBuying: false })).toBeGreaterThanOrEqual(2);
          const jobs = armed.mock.calls.map(([job]) => job).filter((job) => job.kind === 'settle-refund');
          expect(jobs.map((job) => job.data.purchaseId).sort()).toEqual([lost, unasked].sort());
          for (const job of jobs) await api.get(Scheduler).schedule({ ...job, runAt: clock.now() });
        } finally {
          armed.mockRestore();
        }
        for (const purchaseId of [lost, unasked]) {
          const purchase = await eventually(
            async () => (await api.call('GET', `/purchases/${purchaseId}`, { apiKey })).body.purchase,
            (p) => p.refunds[0].state !== 'pending',
          );
          expect(purchase.refunds[0].state).toBe('succeeded');
          expect(purchase.amount_refunded).toBe(purchase.amount);
          expect(await api.get(PaymentGateway).refundOutcome(`refund-${purchase.refunds[0].id}`)).toMatchObject({ status: 'refunded' });
          const events = await api.get(EventStore).readStream(purchaseStream(purchaseId));
          expect(events.filter((e) => e.type === 'RefundSucceeded')).toHaveLength(1);
        }
      },
    );
  });
});
