import { EventStore, handleCommand, ManualClock, PaymentGateway, Scheduler } from '@deals/kernel';
import { RefundPurchase, RefundSteps } from '@deals/purchasing/commands/refund-purchase/refund-purchase.command';
import { couponStream } from '@deals/purchasing/domain/coupon/coupon.events';
import { purchaseDecider } from '@deals/purchasing/domain/purchase/purchase.decider';
import { purchaseStream } from '@deals/purchasing/domain/purchase/purchase.events';
import { CommandBus } from '@nestjs/cqrs';
import { runCli, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';
import { buyerWithCard, REFUND_LATE_TEST_CARD, REFUND_REFUSED_TEST_CARD } from '../../support/test-cards';

/** Refunds of card purchases and claimed reservations: the command, and the calls over HTTPS. */
describe('refunding a purchase', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let partner: { apiKey: string; partnerId: string };
  let buyer: { userId: string; cardId: string };

  beforeAll(async () => {
    api = await TestApi.start({ clock });
    const made = await api.createPartner();
    partner = { apiKey: made.apiKey, partnerId: made.partnerId };
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, current_price: 1000, quantity: 50, max_per_user: undefined }]);
    buyer = await buyerPaying('refunded@example.com');
  });
  afterAll(() => api.close());

  /** A new user of the partner's, with a stored card (an approved one unless `number` says otherwise). */
  const buyerPaying = (email: string, number?: string) =>
    buyerWithCard(
      { call: (method, path, body) => api.call(method, path, { apiKey: partner.apiKey, body }) },
      partner.apiKey,
      email,
      number,
    );
  const buy = async (quantity: number, who = buyer) => {
    const reply = await api.call('POST', '/purchases', {
      apiKey: partner.apiKey,
      body: { deal_id: spaDay.id, user_id: who.userId, credit_card_id: who.cardId, quantity, expected_price_per_unit: 1000 },
    });
    if (reply.status !== 200) throw new Error(`the purchase was refused: ${JSON.stringify(reply.body)}`);
    return reply.body.purchase as { id: string; coupons: Array<{ id: string }> };
  };
  const refund = (purchaseId: string, couponIds: string[] | null, forced = false) =>
    api.get(CommandBus).execute(
      new RefundPurchase(purchaseId, { couponIds, reason: 'requested_by_customer', note: null, forced }, {
        partnerId: partner.partnerId,
        actor: 'test',
      } as never),
    );
  const events = async (purchaseId: string) => (await api.get(EventStore).readStream(purchaseStream(purchaseId))).map((e) => e.type);

  it('pays back each coupon its share through the processor, once, and voids the coupons', async () => {
    const purchase = await buy(3);
    const first = await refund(purchase.id, [purchase.coupons[0].id]);
    const gateway = api.get(PaymentGateway);
    expect(await gateway.refundOutcome(`refund-${first.refundId}`)).toMatchObject({ status: 'refunded' });
    expect(await events(purchase.id)).toEqual(expect.arrayContaining(['RefundRequested', 'RefundSucceeded']));
    await api.settle();
    const coupon = await api.call('GET', `/users/${buyer.userId}/coupons?filter=valid`, { apiKey: partner.apiKey });
    expect(coupon.body.coupons.map((c: { id: string }) => c.id)).not.toContain(purchase.coupons[0].id);
    // The same coupon again: refused; the rest by default: the two others.
    await expect(refund(purchase.id, [purchase.coupons[0].id])).rejects.toThrow(/already part of another refund/);
    const rest = await refund(purchase.id, null);
    const requested = (await api.get(EventStore).readStream(purchaseStream(purchase.id))).filter((e) => e.type === 'RefundRequested');
    expect(requested.map((e) => (e.data as { amountCents: number }).amountCents)).toEqual([1000, 2000]);
    expect((requested[1].data as { refundId: string }).refundId).toBe(rest.refundId);
    await expect(refund(purchase.id, null)).rejects.toThrow(/names no coupon/);
  });

  it('keeps a redeemed coupon unless an operator forces it', async () => {
    const purchase = await buy(1);
    const couponId = purchase.coupons[0].id;
    expect((await api.call('PUT', `/coupons/${couponId}/redeem`, { apiKey: partner.apiKey })).status).toBe(200);
    await expect(refund(purchase.id, [couponId])).rejects.toThrow(/non-refundable state/);
    await refund(purchase.id, [couponId], true);
    expect(await events(purchase.id)).toContain('RefundSucceeded');
  });

  it('fails a refund whose coupon was redeemed after it was decided, naming it, and holds none of its coupons', async () => {
    const purchase = await buy(2);
    const [kept, redeemed] = purchase.coupons.map((c) => c.id);
    // The refund decided on the purchase (both coupons checked then), and a coupon redeemed before its settling.
    const refundId = 'race1';
    await handleCommand(
      api.get(EventStore),
      purchaseStream(purchase.id),
      purchaseDecider,
      {
        type: 'RequestRefund',
        data: {
          purchaseId: purchase.id,
          partnerId: partner.partnerId,
          refundId,
          couponIds: [kept, redeemed],
          reason: 'requested_by_customer',
          note: null,
          forced: false,
        },
      },
      { now: clock.now(), metadata: { partnerId: partner.partnerId, actor: 'test' } },
    );
    expect((await api.call('PUT', `/coupons/${redeemed}/redeem`, { apiKey: partner.apiKey })).status).toBe(200);
    const settled = await api.get(RefundSteps).settle(purchase.id, refundId, { partnerId: partner.partnerId, actor: 'test' });
    expect(settled.state).toBe('failed');
    const failed = (await api.get(EventStore).readStream(purchaseStream(purchase.id))).find((e) => e.type === 'RefundFailed');
    expect(failed?.data).toMatchObject({ refundId, reason: `${redeemed}: the coupon is in a non-refundable state` });
    expect(await api.get(PaymentGateway).refundOutcome(`refund-${refundId}`)).toBeNull();
    // Neither coupon was held: the one still valid is refunded by the next refund.
    const couponEvents = async (id: string) => (await api.get(EventStore).readStream(couponStream(id))).map((e) => e.type);
    expect(await couponEvents(kept)).not.toContain('CouponRefundStarted');
    expect(await couponEvents(redeemed)).not.toContain('CouponRefundStarted');
    await refund(purchase.id, [kept]);
    expect(await couponEvents(kept)).toContain('CouponRefunded');
  });

  it("refunds a claimed reservation's coupons without the processor: the partner took the money", async () => {
    const reserved = await api.call('POST', '/purchases/reserve', { apiKey: partner.apiKey, body: { deal_id: spaDay.id, num_bought: 2 } });
    const purchaseId = reserved.body.purchase.id;
    expect(
      (await api.call('PUT', `/purchases/${purchaseId}/claim`, { apiKey: partner.apiKey, body: { user_id: buyer.userId } })).status,
    ).toBe(200);
    const { refundId } = await refund(purchaseId, null);
    expect(await api.get(PaymentGateway).refundOutcome(`refund-${refundId}`)).toBeNull();
    expect(await events(purchaseId)).toContain('RefundSucceeded');
  });

  it('refunds over HTTPS: POST /purchases/:id/refunds answers the refund; the purchase and the user list it; refusals name the coupon', async () => {
    const purchase = await buy(2);
    const path = `/purchases/${purchase.id}/refunds`;
    const created = await api.call('POST', path, {
      apiKey: partner.apiKey,
      body: { coupon_ids: [purchase.coupons[1].id], reason: 'duplicate', note: 'bought twice' },
    });
    expect(created.status).toBe(201);
    expect(created.body.refund).toMatchObject({
      purchase_id: purchase.id,
      user_id: buyer.userId,
      coupon_ids: [purchase.coupons[1].id],
      amount: 1000,
      reason: 'duplicate',
      note: 'bought twice',
      forced: false,
      state: 'succeeded',
      failure_reason: null,
    });
    const again = await api.call('POST', path, {
      apiKey: partner.apiKey,
      body: { coupon_ids: [purchase.coupons[1].id], reason: 'duplicate' },
    });
    expect(again.status).toBe(422);
    expect(again.body.error_msg).toMatch(/already part of another refund/);
    const bad = await api.call('POST', path, { apiKey: partner.apiKey, body: { reason: 'changed_mind' } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'reason' })]);
    expect((await api.call('POST', '/purchases/nope/refunds', { apiKey: partner.apiKey, body: { reason: 'duplicate' } })).status).toBe(404);
    const listed = await api.call('GET', path, { apiKey: partner.apiKey });
    expect(listed.body.refunds.map((r: { id: string }) => r.id)).toEqual([created.body.refund.id]);
    const ofUser = await api.call('GET', `/users/${buyer.userId}/refunds?count=true`, { apiKey: partner.apiKey });
    expect(ofUser.body.count).toBeGreaterThanOrEqual(1);
    const own = await api.call('GET', `/purchases/${purchase.id}`, { apiKey: partner.apiKey });
    expect(own.body.purchase.coupons.map((c: { state: string }) => c.state)).toEqual(['valid', 'cancelled']);
    expect(own.body.purchase).toMatchObject({
      payment_state: 'charged',
      amount: 2000,
      amount_refunded: 1000,
      refunds: [created.body.refund],
    });
    // The feed tells the refund, the purchase refunded and its coupon cancelled.
    await api.settle();
    const feed = await api.call('GET', '/v1/events?limit=100', { apiKey: partner.apiKey });
    const told = (feed.body.events as Array<{ type: string; resource_id: string; data: { state?: string }; refund_id?: string }>).filter(
      (e) => e.resource_id === created.body.refund.id || e.resource_id === purchase.id || e.resource_id === purchase.coupons[1].id,
    );
    expect(told.map((e) => e.type)).toEqual(
      expect.arrayContaining(['refund.created', 'refund.succeeded', 'purchase.refunded', 'coupon.cancelled']),
    );
    expect(told.find((e) => e.type === 'refund.created')?.data).toMatchObject({ id: created.body.refund.id, state: 'pending' });
    expect(told.find((e) => e.type === 'refund.succeeded')?.data).toEqual(created.body.refund);
    expect(told.find((e) => e.type === 'purchase.refunded')?.refund_id).toBe(created.body.refund.id);
    // Another partner sees none of it.
    const other = await api.createPartner('Other');
    expect((await api.call('GET', path, { apiKey: other.apiKey })).status).toBe(404);
    expect((await api.call('POST', path, { apiKey: other.apiKey, body: { reason: 'duplicate' } })).status).toBe(404);
  });

  it("tells a refund the card's issuer refused as failed, its coupons still valid to refund again", async () => {
    const refused = await buyerPaying('refund-refused@example.com', REFUND_REFUSED_TEST_CARD);
    const purchase = await buy(1, refused);
    const created = await api.call('POST', `/purchases/${purchase.id}/refunds`, {
      apiKey: partner.apiKey,
      body: { reason: 'requested_by_customer' },
    });
    expect(created.status).toBe(201);
    expect(created.body.refund).toMatchObject({ state: 'failed', failure_reason: expect.stringMatching(/issuer refused/), amount: 1000 });
    const own = (await api.call('GET', `/purchases/${purchase.id}`, { apiKey: partner.apiKey })).body.purchase;
    expect(own).toMatchObject({ amount_refunded: 0, refunds: [created.body.refund] });
    expect(own.coupons.map((c: { state: string }) => c.state)).toEqual(['valid']);
    await api.settle();
    const feed = await api.call('GET', '/v1/events?limit=100&types=refund.failed', { apiKey: partner.apiKey });
    expect(feed.body.events.map((e: { data: unknown }) => e.data)).toContainEqual(created.body.refund);
    // Its coupon may be refunded again (and is refused again, by the same issuer).
    const again = await api.call('POST', `/purchases/${purchase.id}/refunds`, { apiKey: partner.apiKey, body: { reason: 'duplicate' } });
    expect(again.body.refund).toMatchObject({ state: 'failed', coupon_ids: created.body.refund.coupon_ids });
  });

  it('keeps a refund whose processor answer was lost pending; its settling job asks again under its key and pays once', async () => {
    const late = await buyerPaying('refund-late@example.com', REFUND_LATE_TEST_CARD);
    const purchase = await buy(2, late);
    const armed = jest.spyOn(api.get(Scheduler), 'schedule');
    try {
      const created = await api.call('POST', `/purchases/${purchase.id}/refunds`, {
        apiKey: partner.apiKey,
        body: { reason: 'merchant_unable_to_fulfil' },
      });
      expect(created.status).toBe(201);
      expect(created.body.refund).toMatchObject({ state: 'pending', amount: 2000, failure_reason: null, settled_at: null });
      const job = armed.mock.calls.map(([j]) => j).find((j) => j.kind === 'settle-refund' && j.data.refundId === created.body.refund.id);
      expect(job).toBeDefined();
      // The job, run now rather than 30 s of real time away.
      await api.get(Scheduler).schedule({ ...job!, runAt: clock.now() });
      const refund = await eventually(
        async () => (await api.call('GET', `/purchases/${purchase.id}/refunds`, { apiKey: partner.apiKey })).body.refunds[0],
        (r) => r.state !== 'pending',
      );
      expect(refund).toMatchObject({ id: created.body.refund.id, state: 'succeeded', amount: 2000 });
      const outcome = await api.get(PaymentGateway).refundOutcome(`refund-${refund.id}`);
      expect(outcome).toMatchObject({ status: 'refunded' });
      expect((await events(purchase.id)).filter((t) => t === 'RefundSucceeded')).toHaveLength(1);
    } finally {
      armed.mockRestore();
    }
  }, 90_000);

  it('answers a refund asked again with its Idempotency-Key as first answered, paying back once', async () => {
    const purchase = await buy(1);
    const ask = (key: string) =>
      api.call('POST', `/purchases/${purchase.id}/refunds`, {
        apiKey: partner.apiKey,
        headers: { 'idempotency-key': key },
        body: { reason: 'requested_by_customer' },
      });
    const first = await ask('refund-once');
    expect(first.status).toBe(201);
    const again = await ask('refund-once');
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const listed = await api.call('GET', `/purchases/${purchase.id}/refunds`, { apiKey: partner.apiKey });
    expect(listed.body.refunds).toHaveLength(1);
    // Another key is another request: nothing is left to refund.
    expect((await ask('refund-twice')).status).toBe(422);
  });

  it("refunds a redeemed coupon only through the operator's refunds:force, with its reason and note recorded", async () => {
    const purchase = await buy(1);
    const couponId = purchase.coupons[0].id;
    expect((await api.call('PUT', `/coupons/${couponId}/redeem`, { apiKey: partner.apiKey })).status).toBe(200);
    const refused = await api.call('POST', `/purchases/${purchase.id}/refunds`, { apiKey: partner.apiKey, body: { reason: 'fraudulent' } });
    expect(refused.status).toBe(422);
    const without = await runCli(api.dataDir, ['refunds:force', purchase.id, '--reason', 'fraudulent']);
    expect(without.code).not.toBe(0);
    const forced = await runCli(api.dataDir, [
      'refunds:force',
      purchase.id,
      '--reason',
      'fraudulent',
      '--note',
      'card reported stolen',
      '--json',
    ]);
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ purchase_id: purchase.id, coupon_ids: [couponId], amount: 1000, state: 'succeeded' });
    // The API's views take in what the CLI's process wrote as they tail the log.
    const listed = await eventually(
      async () => (await api.call('GET', `/purchases/${purchase.id}/refunds`, { apiKey: partner.apiKey })).body.refunds,
      (refunds) => refunds[0]?.state === 'succeeded',
    );
    expect(listed[0]).toMatchObject({ forced: true, note: 'card reported stolen', reason: 'fraudulent', state: 'succeeded' });
  }, 120_000);

  it("rolls back a coupon's redemption within 24 hours, once, with the reason and who asked; not later, not another partner's", async () => {
    const purchase = await buy(1);
    const couponId = purchase.coupons[0].id;
    const path = `/coupons/${couponId}/redemption_rollbacks`;
    const rollBack = (body: unknown, apiKey = partner.apiKey) => api.call('POST', path, { apiKey, body });
    expect((await rollBack({ reason: 'redeemed_by_mistake' })).body.errors).toEqual([expect.objectContaining({ field: 'state' })]);
    expect((await api.call('PUT', `/coupons/${couponId}/redeem`, { apiKey: partner.apiKey })).status).toBe(200);
    const bad = await rollBack({ reason: 'because' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'reason' })]);
    const other = await api.createPartner('Rollback other');
    expect((await rollBack({ reason: 'wrong_coupon' }, other.apiKey)).status).toBe(404);
    const rolled = await rollBack({ reason: 'wrong_coupon', note: 'scanned the wrong phone' });
    expect(rolled.status).toBe(200);
    expect(rolled.body.coupon).toMatchObject({ id: couponId, state: 'valid', redeemed_at: null });
    const again = await rollBack({ reason: 'wrong_coupon' });
    expect(again.status).toBe(422);
    expect(again.body.error_msg).toMatch(/is not redeemed/);
    // Redeemed again, it may be rolled back within its own 24 hours only.
    expect((await api.call('PUT', `/coupons/${couponId}/redeem`, { apiKey: partner.apiKey })).status).toBe(200);
    clock.advance(24 * 3_600_000 + 1000);
    const late = await rollBack({ reason: 'redeemed_by_mistake' });
    expect(late.status).toBe(422);
    expect(late.body.error_msg).toMatch(/more than 24 hours ago/);
    const recorded = (await api.get(EventStore).readStream(`coupon-${couponId}`)).filter((e) => e.type === 'CouponRedemptionRolledBack');
    expect(recorded.map((e) => e.data)).toEqual([
      expect.objectContaining({ reason: 'wrong_coupon', note: 'scanned the wrong phone', by: `partner:${partner.partnerId}` }),
    ]);
    await api.settle();
    const feed = await api.call('GET', '/v1/events?limit=100&types=coupon.redemption_rolled_back', { apiKey: partner.apiKey });
    expect(feed.body.events).toEqual([
      expect.objectContaining({
        resource_id: couponId,
        data: expect.objectContaining({ state: 'valid' }),
        rollback: expect.objectContaining({ reason: 'wrong_coupon', note: 'scanned the wrong phone' }),
      }),
    ]);
  });

  it('takes the rollback window the partner sets through /v1/partner_settings: an hour, none at all, or back to the default', async () => {
    const settingsOf = async (apiKey = partner.apiKey) => (await api.call('GET', '/v1/partner_settings', { apiKey })).body;
    const set = (hours: unknown, apiKey = partner.apiKey) =>
      api.call('PUT', '/v1/partner_settings', { apiKey, body: { redemption_rollback_window_hours: hours } });
    expect(await settingsOf()).toEqual({
      status: 'success',
      partner_settings: { redemption_rollback_window_hours: 24, redemption_rollback_window_is_default: true },
    });
    for (const hours of [-1, 721, 1.5, '24']) {
      const refused = await set(hours);
      expect([refused.status, refused.body.errors]).toEqual([
        422,
        [expect.objectContaining({ field: 'redemption_rollback_window_hours' })],
      ]);
    }
    const missing = await api.call('PUT', '/v1/partner_settings', { apiKey: partner.apiKey, body: {} });
    expect(missing.body.errors).toEqual([expect.objectContaining({ field: 'redemption_rollback_window_hours', message: 'is required' })]);
    const one = await set(1);
    expect([one.status, one.body.partner_settings]).toEqual([
      200,
      { redemption_rollback_window_hours: 1, redemption_rollback_window_is_default: false },
    ]);
    // Another partner's window is its own.
    const other = await api.createPartner('Settings other');
    expect((await settingsOf(other.apiKey)).partner_settings.redemption_rollback_window_hours).toBe(24);

    const couponId = (await buy(1)).coupons[0].id;
    const redeem = () => api.call('PUT', `/coupons/${couponId}/redeem`, { apiKey: partner.apiKey });
    const rollBack = () =>
      api.call('POST', `/coupons/${couponId}/redemption_rollbacks`, { apiKey: partner.apiKey, body: { reason: 'other' } });
    expect((await redeem()).status).toBe(200);
    clock.advance(3_600_000 + 1000);
    const late = await rollBack();
    expect([late.status, late.body.error_msg]).toEqual([422, expect.stringMatching(/more than 1 hour ago/)]);
    // Back to the default: the same redemption, an hour old, may be rolled back again.
    expect((await set(null)).body.partner_settings).toEqual({
      redemption_rollback_window_hours: 24,
      redemption_rollback_window_is_default: true,
    });
    expect((await rollBack()).status).toBe(200);
    expect((await set(0)).status).toBe(200);
    expect((await redeem()).status).toBe(200);
    const never = await rollBack();
    expect([never.status, never.body.error_msg]).toEqual([422, expect.stringMatching(/rollback window is 0 hours/)]);
    expect((await set(24)).body.partner_settings.redemption_rollback_window_is_default).toBe(false);
  });
});
