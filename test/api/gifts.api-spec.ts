import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceConfig } from '@deals/runtime';
import { OPERATOR, PaymentGateway, Scheduler, ViewStore } from '@deals/kernel';
import { DeliverDueBatches } from '@deals/messaging';
import { MailGifts } from '@deals/messaging/reactions/mail-gifts.reaction';
import { PURCHASE_DETAILS, PurchaseDetails, RecoverInterruptedPayments, RefundSteps } from '@deals/purchasing';
import { ApiRequest, ApiSpec } from '../support/api-spec';
import { eventually } from '../support/eventually';
import { chicago, spaDay } from '../support/catalogue-fixtures';
import { REFUND_REFUSED_TEST_CARD, TEST_CARDS } from '../support/test-cards';

const MESSAGE = 'Happy birthday, from all of us';
const DELIVER_AT = '2026-06-20T09:00:00Z';

/**
 * A gift purchase at the API level: bought with the payer's card for someone named by email, who
 * becomes (or is) a user of the partner and holds the coupons; the payer's purchases list it, a
 * refund goes back to the payer, and the recipient is mailed at the gift's time.
 */
describe('a gift purchase (API tier)', () => {
  let api: ApiSpec;
  let apiKey: string;
  let sandboxKey: string;
  let partnerId: string;
  let payer: string;
  let card: string;

  beforeAll(async () => {
    api = await ApiSpec.build();
    const partner = await api.givenPartner();
    apiKey = partner.apiKey;
    partnerId = partner.partnerId;
    sandboxKey = partner.sandbox!.apiKey;
    await api.givenCatalogue(
      [chicago],
      [
        ...['gift-new', 'gift-known', 'gift-full', 'gift-refund', 'gift-refused', 'gift-settled', 'gift-refund-lost'].map((id) => ({
          ...spaDay,
          id,
          quantity: 10,
          max_per_user: undefined,
        })),
        // Coupons that expire with the deal's vouchers on 1 July, and coupons good for a week from their purchase.
        { ...spaDay, id: 'gift-expiring', quantity: 10, max_per_user: undefined, expires_at: '2026-07-01T00:00:00Z' },
        { ...spaDay, id: 'gift-week', quantity: 10, max_per_user: undefined, expiration_days: 7 },
      ],
    );
    payer = (await api.send({ method: 'POST', url: '/users', apiKey, body: { email: 'payer@example.com' } })).body.user_id;
    const details = { user_id: payer, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
    card = (await api.send({ method: 'POST', url: '/credit_cards', apiKey, body: details })).body.credit_card_id;
  });
  afterAll(() => api.close());

  /** A gift's mail state, once its mail is recorded (a gift without a delivery time is mailed once bought). */
  const mailOf = async (id: string): Promise<string> => {
    const read = () => api.send({ method: 'GET', url: `/purchases/${id}`, apiKey });
    return (await eventually(read, (reply) => reply.body.purchase.gift.mail_state !== 'scheduled')).body.purchase.gift.mail_state;
  };

  /** Arms the gifts due by the clock as a start arms them, and waits until each has its mail recorded. */
  const mailDue = async () => {
    await api.get(DeliverDueBatches).rearm();
    const now = api.clock.now().getTime();
    const due = async () =>
      (await api.get(ViewStore).find<PurchaseDetails>(PURCHASE_DETAILS, { giftMailDue: true })).filter(
        (p) => p.gift?.deliverAt == null || Date.parse(p.gift.deliverAt) <= now,
      ).length;
    expect(await eventually(due, (left) => left === 0)).toBe(0);
  };

  const buy = (dealId: string, gift: Record<string, unknown>, quantity = 1): ApiRequest => ({
    method: 'POST',
    url: '/purchases',
    apiKey,
    body: { deal_id: dealId, quantity, user_id: payer, credit_card_id: card, expected_price_per_unit: 4900, gift },
  });

  it('makes its recipient a user who holds the coupons, and lists it among the payer’s purchases only', async () => {
    const bought = await api.when(buy('gift-new', { email: 'ann@example.com', name: 'Ann', message: MESSAGE, deliver_at: DELIVER_AT }, 2));
    const id: string = bought.body.purchase?.id;
    const recipient: string = bought.body.purchase?.gift?.recipient_user_id;
    expect(recipient).toEqual(expect.any(String));
    expect(recipient).not.toBe(payer);
    bought.thenAnswers(200, {
      purchase: {
        id,
        user_id: payer,
        credit_card_id: card,
        amount: 9800,
        payment_state: 'charged',
        fulfillment_state: 'fulfilled',
        gift: { recipient_user_id: recipient, deliver_at: '2026-06-20T09:00:00.000Z', mail_state: 'scheduled', mailed_at: null },
      },
    });
    const claim = bought.events.find((event) => event.type === 'EmailClaimed')!.streamId;
    bought.thenEvents({
      [claim]: ['EmailClaimed'],
      [`user-${recipient}`]: ['UserRegistered'],
      'inventory-gift-new': ['UnitsHeld', 'UnitsSold'],
      [`usercharge-${payer}`]: ['ChargeBegun', 'ChargeEnded'],
      [`purchase-${id}`]: ['PurchaseReserved', 'PurchasePaid'],
      [`coupon-${id}-1`]: ['CouponIssued'],
      [`coupon-${id}-2`]: ['CouponIssued'],
    });
    // The coupons are the recipient's; the purchase, the payer's.
    expect(bought.events.filter((e) => e.type === 'CouponIssued').map((e) => (e.data as { userId: string }).userId)).toEqual([
      recipient,
      recipient,
    ]);
    const user = await api.send({ method: 'GET', url: `/users/${recipient}`, apiKey });
    expect([user.status, user.body.user.id]).toEqual([200, recipient]);
    const coupons = await api.send({ method: 'GET', url: `/users/${recipient}/coupons`, apiKey });
    expect(coupons.body.coupons.map((c: { id: string }) => c.id).sort()).toEqual([`${id}-1`, `${id}-2`]);
    // Made with the gift's address: a gift to it now finds that user.
    const again = await api.send(buy('gift-new', { email: 'ANN@example.com', name: 'Ann' }));
    expect(again.body.purchase.gift.recipient_user_id).toBe(recipient);
    expect(await mailOf(again.body.purchase.id)).toBe('sent');
    const listed = await api.send({ method: 'GET', url: `/users/${payer}/purchases`, apiKey });
    expect(listed.body.purchases.find((p: { id: string }) => p.id === id)).toMatchObject({ gift: { recipient_user_id: recipient } });
    expect((await api.send({ method: 'GET', url: `/users/${recipient}/purchases?count=true`, apiKey })).body.count).toBe(0);
    expect((await api.send({ method: 'GET', url: `/users/${recipient}/coupons?count=true`, apiKey })).body.count).toBe(3);
    expect((await api.send({ method: 'GET', url: `/users/${payer}/coupons?count=true`, apiKey })).body.count).toBe(0);
  });

  it('keeps the name and message only sealed in the log, under the recipient’s key, and in no view', async () => {
    const bought = await api.when(buy('gift-new', { email: 'bo@example.com', name: 'Bo Sealed', message: 'A sealed message' }));
    const id: string = bought.body.purchase.id;
    const [stored] = await api.stored.readStream(`purchase-${id}`, 0);
    const written = JSON.stringify(stored.data);
    expect(written).not.toMatch(/Bo Sealed|A sealed message/);
    expect(stored.data).toMatchObject({
      gift: { name: null, message: null },
      $personal: { owner: bought.body.purchase.gift.recipient_user_id },
    });
    const [opened] = await api.log.readStream(`purchase-${id}`, 0);
    expect(opened.data).toMatchObject({ gift: { name: 'Bo Sealed', message: 'A sealed message', deliverAt: null } });
    expect(JSON.stringify(bought.body)).not.toMatch(/Bo Sealed|A sealed message/);
    expect(await mailOf(id)).toBe('sent');
  });

  it('gives the coupons to the partner’s user its email names, compared in NFC and case-folded, making no user', async () => {
    const known = (await api.send({ method: 'POST', url: '/users', apiKey, body: { email: 'jose\u0301@example.com' } })).body.user_id;
    const bought = await api.when(buy('gift-known', { email: 'JOSÉ@example.com', name: 'José' }));
    bought.thenAnswers(200, { purchase: { user_id: payer, gift: { recipient_user_id: known, deliver_at: null } } });
    expect(bought.events.map((e) => e.type)).not.toContain('UserRegistered');
    expect(bought.events.filter((e) => e.type === 'CouponIssued').map((e) => (e.data as { userId: string }).userId)).toEqual([known]);
    expect(await mailOf(bought.body.purchase.id)).toBe('sent');
  });

  it('takes a gift in the full purchase too', async () => {
    const bought = await api.when({
      method: 'POST',
      url: '/v1/purchases/full.json',
      apiKey,
      body: {
        deal_id: 'gift-full',
        quantity: 1,
        user: { email: 'new.payer@example.com' },
        credit_card: { number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
        gift: { email: 'cy@example.com', name: 'Cy', deliver_at: '2026-07-01T00:00:00Z' },
      },
    });
    const newPayer: string = bought.body.purchase?.user_id;
    bought.thenAnswers(200, {
      purchase: { payment_state: 'charged', gift: { deliver_at: '2026-07-01T00:00:00.000Z', mail_state: 'scheduled' } },
    });
    expect(bought.body.purchase.gift.recipient_user_id).not.toBe(newPayer);
  });

  it("refuses, before making anything, a full purchase's gift to the address of the user it makes", async () => {
    const refused = await api.when({
      method: 'POST',
      url: '/v1/purchases/full.json',
      apiKey,
      body: {
        deal_id: 'gift-full',
        quantity: 1,
        user: { email: 'self.giver@example.com' },
        credit_card: { number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
        gift: { email: 'SELF.giver@example.com', name: 'Me' },
      },
    });
    refused.thenAnswers(422, { errors: [expect.objectContaining({ field: 'gift.email' })] });
    refused.thenEvents({});
  });

  it('is checked by a dry run, which makes no recipient', async () => {
    const dry = await api.when({
      method: 'POST',
      url: '/purchases/dry_run',
      apiKey,
      body: {
        deal_id: 'gift-full',
        quantity: 1,
        user_id: payer,
        credit_card_id: card,
        expected_price_per_unit: 4900,
        gift: { email: 'dry@example.com', name: 'Dry' },
      },
    });
    dry.thenAnswers(200, { dry_run: true, purchase: { user_id: payer, amount: 4900 } });
    dry.thenEvents({});
    const late = await api.when({
      method: 'POST',
      url: '/purchases/dry_run',
      apiKey,
      body: {
        deal_id: 'gift-full',
        quantity: 1,
        user_id: payer,
        credit_card_id: card,
        expected_price_per_unit: 4900,
        gift: { email: 'dry@example.com', name: 'Dry', deliver_at: '2027-01-01T00:00:00Z' },
      },
    });
    late.thenAnswers(422, { errors: [expect.objectContaining({ field: 'gift.deliver_at' })] });
  });

  it('refunds the payer: the refund is the payer’s, its money back to the card charged; a gift refunded whole is not mailed', async () => {
    const bought = await api.send(buy('gift-refund', { email: 'di@example.com', name: 'Di', deliver_at: '2026-06-16T12:00:00Z' }));
    const id: string = bought.body.purchase.id;
    const refunded = await api.when({ method: 'POST', url: `/purchases/${id}/refunds`, apiKey, body: { reason: 'requested_by_customer' } });
    refunded.thenAnswers(201, { refund: { purchase_id: id, user_id: payer, amount: 4900, state: 'succeeded' } });
    const payers = await api.send({ method: 'GET', url: `/users/${payer}/refunds`, apiKey });
    expect(payers.body.refunds.map((r: { purchase_id: string }) => r.purchase_id)).toContain(id);
    const recipients = await api.send({ method: 'GET', url: `/users/${bought.body.purchase.gift.recipient_user_id}/refunds`, apiKey });
    expect(recipients.body.refunds).toEqual([]);
    api.clock.set('2026-06-16T12:00:00Z');
    await mailDue();
    api.clock.set('2026-06-15T12:00:00Z');
    expect(await mailOf(id)).toBe('not_sent');
  });

  it('waits, at its time, for a refund of its coupons still pending: refused after it, the coupons are the recipient’s and mailed', async () => {
    const refusing = {
      user_id: payer,
      number: REFUND_REFUSED_TEST_CARD,
      verification_value: '123',
      month: 12,
      year: 2030,
      zip_code: '60601',
    };
    const refusingCard: string = (await api.send({ method: 'POST', url: '/credit_cards', apiKey, body: refusing })).body.credit_card_id;
    const deliverAt = '2026-06-15T13:00:00Z';
    const order = buy('gift-refund-lost', { email: 'hal@example.com', name: 'Hal', deliver_at: deliverAt });
    const bought = await api.send({ ...order, body: { ...(order.body as object), credit_card_id: refusingCard } });
    const id: string = bought.body.purchase.id;
    // The processor refuses the refund, and its answer is lost on the way back: the refund stays pending.
    const gateway = api.get(PaymentGateway);
    const refund = gateway.refund.bind(gateway);
    const spy = jest.spyOn(gateway, 'refund').mockImplementationOnce(async (request) => {
      spy.mockRestore();
      await refund(request);
      return { status: 'error', reason: 'connection reset' };
    });
    const asked = await api.send({ method: 'POST', url: `/purchases/${id}/refunds`, apiKey, body: { reason: 'requested_by_customer' } });
    expect(asked.body.refund).toMatchObject({ state: 'pending' });
    try {
      // Its time comes while the refund is pending: nothing is given up yet.
      api.clock.set(deliverAt);
      await api.get(MailGifts).deliver(id, partnerId);
      expect((await api.log.readStream(`purchase-${id}`, 0)).map((e) => e.type)).not.toContain('GiftMailed');
      // The refund is settled: refused, its coupon valid again and the recipient's, who is told of it.
      expect(await api.get(RefundSteps).settle(id, asked.body.refund.id, { ...OPERATOR, partnerId })).toMatchObject({ state: 'failed' });
      expect(await mailOf(id)).toBe('sent');
    } finally {
      api.clock.set('2026-06-15T12:00:00Z');
    }
  });

  it('mails the recipient at its time, as a start arms it: its coupons and message, recorded once on the purchase', async () => {
    const bought = await api.send(buy('gift-new', { email: 'eve@example.com', name: 'Eve', message: MESSAGE, deliver_at: DELIVER_AT }));
    const id: string = bought.body.purchase.id;
    const mailState = () => api.send({ method: 'GET', url: `/purchases/${id}`, apiKey });
    api.clock.set(DELIVER_AT);
    // Armed again as a start arms it (the request armed it in real time, days ahead of this clock).
    await mailDue();
    expect((await mailState()).body.purchase.gift).toMatchObject({ mail_state: 'sent', mailed_at: '2026-06-20T09:00:00.000Z' });
    const outbox = join(api.get(ServiceConfig).dataDir, 'outbox');
    const [file] = readdirSync(outbox).filter((name) => name.includes(`gift-${id}`));
    const message = readFileSync(join(outbox, file), 'utf8');
    expect(message).toMatch(/^To: eve@example\.com/m);
    expect(message).toContain('Hello Eve,');
    expect(message).toContain(MESSAGE);
    expect(message).toContain(`/coupons/${id}-1/print?key=`);
    // Recorded once: armed again, it is due no more.
    await mailDue();
    expect((await api.log.readStream(`purchase-${id}`, 0)).map((e) => e.type)).toEqual(['PurchaseReserved', 'PurchasePaid', 'GiftMailed']);
    api.clock.set('2026-06-15T12:00:00Z');
  });

  it('settled after its charge had no answer: the recipient holds the coupons and is mailed without waiting for an arming', async () => {
    // The processor charges the card and its answer is lost on the way back (a dropped connection).
    const gateway = api.get(PaymentGateway);
    const charge = gateway.charge.bind(gateway);
    const spy = jest.spyOn(gateway, 'charge').mockImplementationOnce(async (request) => {
      spy.mockRestore();
      await charge(request);
      throw new Error('socket hang up');
    });
    const unanswered = await api.send(buy('gift-settled', { email: 'fay@example.com', name: 'Fay', message: MESSAGE }));
    expect(unanswered.status).toBe(502);
    const id: string = unanswered.body.purchase_id;
    // Its settling job's work: the charge found approved, the sale finished from the purchase's stream.
    await api.get(RecoverInterruptedPayments).settleNow(id);
    await api.settle();
    const shown = (await api.send({ method: 'GET', url: `/purchases/${id}`, apiKey })).body.purchase;
    expect(shown).toMatchObject({ user_id: payer, payment_state: 'charged', fulfillment_state: 'fulfilled' });
    const issued = (await api.log.readAll({ after: null, maxCount: 100_000 })).filter(
      (e) => e.type === 'CouponIssued' && (e.data as { purchaseId: string }).purchaseId === id,
    );
    expect(issued.map((e) => (e.data as { userId: string }).userId)).toEqual([shown.gift.recipient_user_id]);
    // Its mail is armed by the sale, as a sale answered at once arms it (or has gone already): not left to the next arming.
    const armed = (await api.get(Scheduler).list(1000)).some((job) => job.id === `mail-gift-${id}`);
    const recorded = (await api.log.readStream(`purchase-${id}`, 0)).some((e) => e.type === 'GiftMailed');
    expect({ armed: armed || recorded }).toEqual({ armed: true });
    expect(await mailOf(id)).toBe('sent');
  });

  it('under a test clock, settled by the advance after its charge had no answer: mailed in the same advance, at its time', async () => {
    const created = await api.send({
      method: 'POST',
      url: '/v1/test_clocks',
      apiKey: sandboxKey,
      body: { frozen_time: '2026-06-15T12:00:00Z' },
    });
    const clockId: string = created.body.test_clock.id;
    const headers = { 'deals-test-clock': clockId };
    const under = (method: ApiRequest['method'], url: string, body?: unknown) =>
      api.send({ method, url, apiKey: sandboxKey, headers, body });
    const buyer: string = (await under('POST', '/users', { email: 'clock.payer@example.com' })).body.user_id;
    const details = { user_id: buyer, number: TEST_CARDS.visa, verification_value: '123', month: 12, year: 2030, zip_code: '60601' };
    const buyerCard: string = (await under('POST', '/credit_cards', details)).body.credit_card_id;
    const gateway = api.get(PaymentGateway);
    const charge = gateway.charge.bind(gateway);
    const spy = jest.spyOn(gateway, 'charge').mockImplementationOnce(async (request) => {
      spy.mockRestore();
      await charge(request);
      throw new Error('socket hang up');
    });
    const gift = { email: 'clock.friend@example.com', name: 'Gus', deliver_at: '2026-06-16T09:00:00Z' };
    const order = { deal_id: 'gift-settled', quantity: 1, user_id: buyer, credit_card_id: buyerCard, expected_price_per_unit: 4900, gift };
    const unanswered = await under('POST', '/purchases', order);
    expect(unanswered.status).toBe(502);
    const id: string = unanswered.body.purchase_id;
    // One advance past the charge lock's end (its settling job) and past the gift's time.
    expect(
      (
        await api.send({
          method: 'POST',
          url: `/v1/test_clocks/${clockId}/advance`,
          apiKey: sandboxKey,
          body: { frozen_time: '2026-06-17T12:00:00Z' },
        })
      ).status,
    ).toBe(200);
    const ready = await eventually(
      () => api.send({ method: 'GET', url: `/v1/test_clocks/${clockId}`, apiKey: sandboxKey }),
      (reply) => reply.body.test_clock.status === 'ready',
    );
    expect(ready.body.test_clock.status).toBe('ready');
    await api.settle();
    const shown = (await under('GET', `/purchases/${id}`)).body.purchase;
    expect(shown).toMatchObject({ fulfillment_state: 'fulfilled', gift: { mail_state: 'kept', mailed_at: '2026-06-16T09:00:00.000Z' } });
  });

  it('refuses a delivery time at or after its coupons expire (the deal’s vouchers’ end, or its coupons’ days)', async () => {
    const expired = 'must be before its coupons expire';
    const late = await api.when(buy('gift-expiring', { email: 'gil@example.com', name: 'Gil', deliver_at: '2026-07-15T09:00:00Z' }));
    late.thenAnswers(422, { errors: [{ type: 'invalid', resource: 'gift', field: 'gift.deliver_at', message: expired }] });
    late.thenEvents({});
    const afterWeek = await api.when(buy('gift-week', { email: 'gil@example.com', name: 'Gil', deliver_at: '2026-06-25T12:00:00Z' }));
    afterWeek.thenAnswers(422, { errors: [{ type: 'invalid', resource: 'gift', field: 'gift.deliver_at', message: expired }] });
    const dry = await api.send({
      ...buy('gift-expiring', { email: 'gil@example.com', name: 'Gil', deliver_at: '2026-07-01T00:00:00Z' }),
      url: '/purchases/dry_run',
    });
    expect([dry.status, dry.body.errors?.[0]?.field]).toEqual([422, 'gift.deliver_at']);
    // Within the coupons' life: taken.
    const inTime = await api.send(buy('gift-week', { email: 'gil@example.com', name: 'Gil', deliver_at: '2026-06-21T12:00:00Z' }));
    expect(inTime.status).toBe(200);
  });

  describe('refuses, naming the field and its rule, never the value', () => {
    const refusals: Array<[string, Record<string, unknown>, string, string]> = [
      [
        'a message over 500 characters',
        { email: 'x@example.com', name: 'X', message: 'é'.repeat(501) },
        'gift.message',
        'must be text of at most 500 characters',
      ],
      [
        'a delivery time in the past',
        { email: 'x@example.com', name: 'X', deliver_at: '2026-06-15T11:59:59Z' },
        'gift.deliver_at',
        'must be in the future, at most 90 days ahead',
      ],
      [
        'a delivery time over 90 days ahead',
        { email: 'x@example.com', name: 'X', deliver_at: '2026-09-13T12:00:01Z' },
        'gift.deliver_at',
        'must be in the future, at most 90 days ahead',
      ],
      [
        'a delivery time that is no instant',
        { email: 'x@example.com', name: 'X', deliver_at: '2026-07-04' },
        'gift.deliver_at',
        'must be an RFC 3339 date and time with a zone (2026-06-20T09:00:00Z)',
      ],
      ['an address that is none', { email: 'not-an-address', name: 'X' }, 'gift.email', 'is not an email address'],
      ['no name', { email: 'x@example.com' }, 'gift.name', 'is required'],
      [
        'a field it does not describe (a misspelt message)',
        { email: 'x@example.com', name: 'X', mesage: 'hi' },
        'gift.mesage',
        'is not a parameter of this call',
      ],
      [
        "the payer's own address",
        { email: 'PAYER@example.com', name: 'Me' },
        'gift.email',
        "is the buyer's own address: a gift is for another user",
      ],
    ];
    it.each(refusals)('%s: 422, nothing written', async (_, gift, field, message) => {
      const refused = await api.when(buy('gift-refused', gift));
      refused.thenAnswers(422, {
        error_type: 'validation_failed',
        errors: [expect.objectContaining({ resource: 'gift', field, message })],
      });
      refused.thenEvents({});
      const text = JSON.stringify(refused.body);
      for (const value of [gift.message, gift.deliver_at, gift.email].filter((v): v is string => typeof v === 'string'))
        expect(text).not.toContain(value);
    });
    it('a 90 days’ delivery time is taken', async () => {
      const bought = await api.send(buy('gift-refused', { email: 'far@example.com', name: 'Far', deliver_at: '2026-09-13T12:00:00Z' }));
      expect(bought.status).toBe(200);
    });
  });
});
