import { ManualClock } from '@deals/kernel';
import { ReleaseExpiredHold } from '@deals/purchasing/commands/release-expired-hold/release-expired-hold.command';
import { CommandBus } from '@nestjs/cqrs';
import { createHash } from 'node:crypto';
import { runCli, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';

describe('purchase history for auditors: audit:purchase and GET /audit/purchases/:id', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let auditorKey: string;
  let purchaseId: string;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    apiKey = (await api.createPartner('Seller')).apiKey;
    auditorKey = (await api.createPartner('Audit office', 'auditor')).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, quantity: 10 }]);
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'audited@example.com' } })).body.user_id;
    purchaseId = (
      await api.call('POST', '/purchases/reserve', {
        apiKey,
        body: { deal_id: 'chicago-spa-day', num_bought: 2 },
        headers: { 'x-request-id': 'req-reserve' },
      })
    ).body.purchase.id;
    clock.advance(60_000);
    await api.call('PUT', `/purchases/${purchaseId}/claim`, {
      apiKey,
      body: { user_id: userId },
      headers: { 'x-request-id': 'req-claim', 'x-correlation-id': 'order-77' },
    });
    await api.settle();
  });
  afterAll(() => api.close());

  it('lists every event of the purchase in log order, with actor, ids and the state after each', async () => {
    const reply = await api.call('GET', `/audit/purchases/${purchaseId}`, { apiKey: auditorKey });
    expect(reply.status).toBe(200);
    const events = reply.body.events;
    expect(events.map((e: { type: string; purchaseState: string }) => [e.type, e.purchaseState])).toEqual([
      // The reservation and its hold are one write, the deal's inventory first.
      ['UnitsHeld', 'none'],
      ['PurchaseReserved', 'reserved'],
      ['UnitsSold', 'reserved'],
      ['PurchaseClaimed', 'fulfilled'],
      ['CouponIssued', 'fulfilled'],
      ['CouponIssued', 'fulfilled'],
    ]);
    expect(events[0]).toMatchObject({
      actor: expect.stringMatching(/^partner:/),
      requestId: 'req-reserve',
      correlationId: 'req-reserve',
      occurredAt: '2026-06-15T12:00:00.000Z',
    });
    expect(events[3]).toMatchObject({ requestId: 'req-claim', correlationId: 'order-77', occurredAt: '2026-06-15T12:01:00.000Z' });
    // A coupon's barcode and redemption code redeem it: the auditor sees their last four characters.
    const coupon = (await api.call('GET', `/purchases/${purchaseId}`, { apiKey })).body.purchase.coupons[0];
    const issued = events.find(
      (e: { type: string; data: { couponId: string } }) => e.type === 'CouponIssued' && e.data.couponId === coupon.id,
    );
    expect(issued.data).toMatchObject({
      barcode: `${'•'.repeat(coupon.barcode.length - 4)}${coupon.barcode.slice(-4)}`,
      redemptionCode: `${'•'.repeat(coupon.redemption_code.length - 4)}${coupon.redemption_code.slice(-4)}`,
    });
    expect(JSON.stringify(reply.body)).not.toContain(coupon.redemption_code);
    expect(JSON.stringify(reply.body)).not.toContain(coupon.barcode);
    // Nor can the codes be worked out from the coupon id the history shows: they are keyed by the installation's secret.
    const unkeyed = createHash('sha256').update(`coupon:${coupon.id}`).digest();
    const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
    expect(coupon.redemption_code).not.toBe([...unkeyed.subarray(12, 22)].map((b) => ALPHABET[b % ALPHABET.length]).join(''));
    const positions = events.map((e: { position: string }) => e.position);
    expect([...positions].sort()).toEqual(positions);
    const asOf = await api.call('GET', `/audit/purchases/${purchaseId}?as_of=2026-06-15T12:00:30Z`, { apiKey: auditorKey });
    expect(asOf.body.events.map((e: { type: string }) => e.type)).toEqual(['UnitsHeld', 'PurchaseReserved']);
    for (const bad of [
      'garbage',
      '1',
      '2026-13-45T00:00:00Z',
      '2026-02-30',
      '2026-06-15',
      'Jun 15 2026 12:00:30 GMT',
      '2026-06-15Z',
      '2026-06-15 12:00',
      '2026-06-15T12:00:00',
    ]) {
      const refused = await api.call('GET', `/audit/purchases/${purchaseId}?as_of=${encodeURIComponent(bad)}`, { apiKey: auditorKey });
      expect([bad, refused.status, refused.body.errors]).toEqual([
        bad,
        422,
        [{ type: 'invalid', resource: 'request', field: 'as_of', message: 'must be an ISO 8601 instant' }],
      ]);
    }
  });

  it("lists a reseller sale's claim of its transaction reference, with the terms it recorded", async () => {
    const reseller = await api.createPartner('Reseller');
    const sale = await api.call('POST', '/api/v3/resellers/purchases', {
      basic: { username: reseller.username, password: reseller.password },
      body: {
        deal_id: 'chicago-spa-day',
        quantity: 1,
        transaction_reference: 'tx-audited',
        transaction_date: '2026-06-15T11:59:00Z',
        transaction_amount: 4900,
        first_name: 'Ray',
        last_name: 'Sell',
      },
    });
    expect(sale.status).toBe(200);
    await api.settle();
    const events = (await api.call('GET', `/audit/purchases/${sale.body.id}`, { apiKey: auditorKey })).body.events as Array<{
      type: string;
      data: Record<string, unknown>;
    }>;
    expect(events.map((e) => e.type)).toEqual([
      'TransactionReferenceClaimed',
      'UnitsHeld',
      'TransactionReferenceSelling',
      'PurchaseReserved',
      'UnitsSold',
      'PurchaseResold',
      'CouponIssued',
    ]);
    expect(events[0].data).toMatchObject({
      purchaseId: sale.body.id,
      transactionReference: 'tx-audited',
      terms: { amountCents: 4900, transactionDate: '2026-06-15T11:59:00Z' },
    });
  });

  it('is for auditors only, and an auditor can never write', async () => {
    expect((await api.call('GET', `/audit/purchases/${purchaseId}`, { apiKey })).status).toBe(403);
    expect(
      (await api.call('POST', '/purchases/reserve', { apiKey: auditorKey, body: { deal_id: 'chicago-spa-day', num_bought: 1 } })).status,
    ).toBe(403);
    expect((await api.call('GET', '/audit/purchases/nothing', { apiKey: auditorKey })).status).toBe(404);
  });

  it('prints the same history from the CLI, as text and JSON, beside the running server', async () => {
    const text = await runCli(api.dataDir, ['audit:purchase', purchaseId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`purchase ${purchaseId}: 6 events`);
    expect(text.stdout).toMatch(/PurchaseClaimed .* request req-claim {2}correlation order-77 {2}-> fulfilled/);
    const json = JSON.parse(
      (await runCli(api.dataDir, ['audit:purchase', purchaseId, '--json', '--as-of', '2026-06-15T12:00:30Z'])).stdout,
    );
    expect(json.map((e: { type: string }) => e.type)).toEqual(['UnitsHeld', 'PurchaseReserved']);
    // Only an instant cuts the history: not a bare date, nor what Date would guess from `1`.
    for (const bad of ['1', '2026-06-15', '2026-06-15T12:00:30']) {
      const refused = await runCli(api.dataDir, ['audit:purchase', purchaseId, '--as-of', bad]);
      expect([bad, refused.code, refused.stderr]).toEqual([bad, 1, expect.stringContaining('--as-of needs an ISO 8601 instant')]);
    }
  }, 120_000);

  it('shows a reservation released from its hold lapse on, and fulfilled by a claim of fresh units after it', async () => {
    const buyer = (await api.call('POST', '/users', { apiKey, body: { email: 'late@example.com' } })).body.user_id;
    const lapsed: string = (await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: 'chicago-spa-day', num_bought: 1 } }))
      .body.purchase.id;
    clock.advance(5 * 60_000);
    await api.get(CommandBus).execute(new ReleaseExpiredHold('chicago-spa-day', lapsed));
    clock.advance(60_000);
    expect((await api.call('PUT', `/purchases/${lapsed}/claim`, { apiKey, body: { user_id: buyer } })).status).toBe(200);
    await api.settle();
    const events = (await api.call('GET', `/audit/purchases/${lapsed}`, { apiKey: auditorKey })).body.events;
    expect(events.map((e: { type: string; purchaseState: string }) => [e.type, e.purchaseState])).toEqual([
      // The reservation and its hold are one write, the deal's inventory first.
      ['UnitsHeld', 'none'],
      ['PurchaseReserved', 'reserved'],
      ['UnitsReleased', 'released'],
      ['UnitsHeld', 'released'],
      ['UnitsSold', 'released'],
      ['PurchaseClaimed', 'fulfilled'],
      ['CouponIssued', 'fulfilled'],
    ]);
  });
});
