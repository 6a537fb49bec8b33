import { createHash } from 'node:crypto';
import { EventStore, ManualClock } from '@deals/kernel';
import { runCli, TestApi } from '../../support/api-harness';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { auditedDay, auditedLines } from '../../support/settlement-audit';
import { buyerWithCard } from '../../support/test-cards';

/** Daily statements: GET /v1/settlements/:date, the range, the CSV, closing, and the auditor's recompute. */
describe('settlements', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let partner: { apiKey: string; partnerId: string };
  let other: { apiKey: string; partnerId: string };
  let buyer: { userId: string; cardId: string };

  beforeAll(async () => {
    api = await TestApi.start({ clock });
    partner = await api.createPartner('Settled');
    other = await api.createPartner('Settled other');
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, current_price: 1000, quantity: 100, max_per_user: undefined }, cardLinked]);
    buyer = await buyerWithCard(
      { call: (method, path, body) => api.call(method, path, { apiKey: partner.apiKey, body }) },
      partner.apiKey,
      'settled@example.com',
    );
  });
  afterAll(() => api.close());

  const call = (path: string, apiKey = partner.apiKey) => api.call('GET', path, { apiKey });
  const buy = async (quantity: number) => {
    const reply = await api.call('POST', '/purchases', {
      apiKey: partner.apiKey,
      body: { deal_id: spaDay.id, user_id: buyer.userId, credit_card_id: buyer.cardId, quantity, expected_price_per_unit: 1000 },
    });
    expect(reply.status).toBe(200);
    return reply.body.purchase as { id: string; coupons: Array<{ id: string }> };
  };
  const refund = async (purchaseId: string, couponIds?: string[]) => {
    const reply = await api.call('POST', `/purchases/${purchaseId}/refunds`, {
      apiKey: partner.apiKey,
      body: { reason: 'requested_by_customer', ...(couponIds ? { coupon_ids: couponIds } : {}) },
    });
    expect([reply.status, reply.body.refund.state]).toEqual([201, 'succeeded']);
    return reply.body.refund as { id: string; amount: number };
  };
  const statement = async (day: string, apiKey = partner.apiKey) => {
    await api.settle();
    return (await call(`/v1/settlements/${day}`, apiKey)).body;
  };

  it('books sales, refunds and card-link incentives and fees on the UTC day they happen; closes an hour after the day; a later refund lands on its own day', async () => {
    const first = await buy(2);
    await buy(1);
    await refund(first.id, [first.coupons[0].id]);
    const link = (
      await api.call('POST', '/card_links', { apiKey: partner.apiKey, body: { user_id: buyer.userId, deal_id: cardLinked.id } })
    ).body.card_link;
    const redeemed = await api.call('PUT', `/card_links/${link.id}/redeem`, {
      apiKey: partner.apiKey,
      body: { transaction_reference: 'st-1', transaction_amount: 3000, transaction_date: '2026-06-15T12:30:00' },
    });
    expect(redeemed.status).toBe(200);

    const open = await statement('2026-06-15');
    expect(open.settlement).toEqual({
      date: '2026-06-15',
      livemode: true,
      state: 'open',
      closes_at: '2026-06-16T01:00:00.000Z',
      gross_sales_cents: 3000,
      refunds_cents: 1000,
      incentives_credited_cents: 500,
      incentives_reversed_cents: 0,
      fees_cents: 325,
      fees_reversed_cents: 0,
      net_cents: 3000 - 1000 - 500 - 325,
      line_item_count: 4,
      digest: null,
    });
    expect(open.line_items.map((l: { kind: string; channel: string | null }) => [l.kind, l.channel])).toEqual([
      ['sale', 'card'],
      ['sale', 'card'],
      ['refund', null],
      ['card_transaction_cleared', null],
    ]);
    // Another partner's statement holds none of it.
    expect((await statement('2026-06-15', other.apiKey)).settlement).toMatchObject({ gross_sales_cents: 0, line_item_count: 0 });

    // The next day, before the close: the 15th is still open; a refund now lands on the 16th, with the card transaction's.
    clock.set(new Date('2026-06-16T00:30:00Z'));
    await refund(first.id);
    const phase = await api.call('PUT', `/card_links/${link.id}/transactions/st-1`, {
      apiKey: partner.apiKey,
      body: { phase: 'refunded', transaction_amount: 3000, transaction_date: '2026-06-15T12:30:00' },
    });
    expect(phase.status).toBe(200);
    expect((await statement('2026-06-15')).settlement).toMatchObject({ state: 'open', refunds_cents: 1000, line_item_count: 4 });
    expect((await statement('2026-06-16')).settlement).toMatchObject({
      refunds_cents: 1000,
      incentives_reversed_cents: 500,
      fees_reversed_cents: 325,
      net_cents: -1000 + 500 + 325,
    });

    clock.set(new Date('2026-06-16T01:00:00Z'));
    const closed = await statement('2026-06-15');
    expect(closed.settlement.state).toBe('closed');
    const csv = await api.raw('GET', '/v1/settlements/2026-06-15/line_items.csv', { apiKey: partner.apiKey });
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe('attachment; filename="settlement-2026-06-15.csv"');
    expect(closed.settlement.digest).toBe(createHash('sha256').update(csv.text).digest('hex'));
    expect(csv.text.split('\n')[0]).toBe(
      'position,line_id,kind,reference,channel,at,gross_cents,refund_cents,incentive_cents,incentive_reversed_cents,fee_cents,fee_reversed_cents',
    );
    expect(csv.text.trimEnd().split('\n')).toHaveLength(5);

    const range = await call('/v1/settlements?from=2026-06-14&to=2026-06-16');
    expect(
      range.body.settlements.map((s: { date: string; state: string; line_item_count: number }) => [s.date, s.state, s.line_item_count]),
    ).toEqual([
      ['2026-06-14', 'closed', 0],
      ['2026-06-15', 'closed', 4],
      ['2026-06-16', 'open', 2],
    ]);
    expect(range.body.settlements[1]).toEqual(closed.settlement);
  });

  it('refuses a day that is no date, a day ahead, and a range backwards or longer than 92 days, naming the field', async () => {
    const refused = async (path: string, field: string) => {
      const reply = await call(path);
      expect([reply.status, reply.body.error_type, reply.body.errors]).toEqual([
        422,
        'validation_failed',
        [expect.objectContaining({ field })],
      ]);
    };
    await refused('/v1/settlements/2026-02-30', 'date');
    await refused('/v1/settlements/2026-13-01', 'date');
    await refused('/v1/settlements/yesterday', 'date');
    await refused('/v1/settlements/2099-01-01', 'date');
    await refused('/v1/settlements/2099-01-01/line_items.csv', 'date');
    await refused('/v1/settlements?from=2026-06-10&to=2026-06-09', 'to');
    await refused('/v1/settlements?from=2026-01-01&to=2026-06-01', 'to');
    await refused('/v1/settlements?to=2026-06-01', 'from');
  });

  it('matches, on every closed day and to the cent, what an auditor computes from the event log alone', async () => {
    // More days of sales and refunds.
    for (const day of ['2026-06-16T10:00:00Z', '2026-06-17T09:00:00Z', '2026-06-17T23:59:59Z']) {
      clock.set(new Date(day));
      const purchase = await buy(3);
      await refund(purchase.id, [purchase.coupons[1].id]);
    }
    clock.set(new Date('2026-06-19T02:00:00Z'));
    await api.settle();
    const events = await api.get(EventStore).readAll({ after: null, maxCount: 1_000_000 });
    const lines = auditedLines(events);
    for (const { partnerId, apiKey } of [partner, other]) {
      const days = (await call('/v1/settlements?from=2026-06-10&to=2026-06-18', apiKey)).body.settlements as Array<Record<string, unknown>>;
      expect(days.every((s) => s.state === 'closed')).toBe(true);
      for (const day of days) {
        const { csv, ...audited } = auditedDay(lines, partnerId, day.date as string);
        expect({ date: day.date, ...audited }).toEqual({
          date: day.date,
          ...Object.fromEntries(Object.keys(audited).map((k) => [k, day[k]])),
        });
        if (audited.line_item_count > 0)
          expect((await api.raw('GET', `/v1/settlements/${day.date}/line_items.csv`, { apiKey })).text).toBe(csv);
      }
    }
  });

  it('prints a statement with the operator CLI: npm run cli -- settlements:show', async () => {
    await api.settle();
    const text = await runCli(api.dataDir, ['settlements:show', partner.partnerId, '2026-06-15']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`partner ${partner.partnerId}, 2026-06-15 (UTC): closed, digest `);
    expect(text.stdout).toMatch(/gross sales\s+30\.00\n/);
    expect(text.stdout).toMatch(/net\s+11\.75\n/);
    expect(text.stdout).toContain('4 line items:');
    const csv = await runCli(api.dataDir, ['settlements:show', partner.partnerId, '2026-06-15', '--csv']);
    expect(csv.stdout).toBe((await api.raw('GET', '/v1/settlements/2026-06-15/line_items.csv', { apiKey: partner.apiKey })).text);
    const refused = await runCli(api.dataDir, ['settlements:show', partner.partnerId, 'June']);
    expect(refused.code).not.toBe(0);
  }, 120_000);
});
