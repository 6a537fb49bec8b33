import { EventStore, ManualClock } from '@deals/kernel';
import fc from 'fast-check';
import { Reply, TestApi } from '../../support/api-harness';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { auditedDay, auditedLines } from '../../support/settlement-audit';
import { buyerWithCard } from '../../support/test-cards';

/** Transaction references, some that CSV must quote or keep a spreadsheet from running. */
const REFERENCES = ['tx-0', '=SUM(A1:A9)', 'a,b', 'say "hi"', '-12', '@cmd'];
/** An odd price, so that refunds of some of a purchase's coupons split cents. */
const PRICE = 999;

/** One step; `pick` chooses among what the run made so far. */
type Action =
  | { kind: 'buy'; quantity: number }
  | { kind: 'refund'; pick: number; coupons: number[] }
  | { kind: 'redeem'; pick: number }
  | { kind: 'rollback'; pick: number }
  | { kind: 'card'; pick: number; phase: 'authorised' | 'cleared' | 'refunded'; amount: number }
  | { kind: 'advance'; hours: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('buy' as const), quantity: fc.integer({ min: 1, max: 4 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('refund' as const), pick: fc.nat(), coupons: fc.array(fc.nat(), { maxLength: 3 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('redeem' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rollback' as const), pick: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('card' as const),
      pick: fc.integer({ min: 0, max: 5 }),
      phase: fc.constantFrom('authorised' as const, 'cleared' as const, 'refunded' as const),
      amount: fc.integer({ min: 100, max: 6000 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), hours: fc.integer({ min: 1, max: 30 }) }) },
);

/** What a step may answer; anything else (a 500 above all) fails the run. */
const EXPECTED: Record<Exclude<Action['kind'], 'advance'>, number[]> = {
  buy: [200],
  refund: [201, 404, 422], // 404: nothing bought yet; 422: a coupon redeemed, expired or refunded
  redeem: [200, 404, 422],
  rollback: [200, 404, 422],
  card: [200, 422], // 422: a refund of a transaction never reported, another amount, a fulfilled link
};

/**
 * Random runs of purchases, refunds, redemptions and their rollbacks, and card transactions in
 * phases, over several days: the books balance. Each partner's statements add up to what the
 * service answered it did (sales, refunds, incentives and fees credited and reversed), no purchase
 * pays back more than it was paid and one refunded whole pays back exactly its amount, no
 * transaction reverses more than it earned, and every day is what an auditor computes from the log.
 */
describe('balanced books (property)', () => {
  const clock = new ManualClock(new Date('2026-03-01T12:00:00Z'));
  let api: TestApi;
  beforeAll(async () => {
    api = await TestApi.start({ clock });
    await api.importRegions([chicago]);
    await api.importDeals([
      {
        ...spaDay,
        current_price: PRICE,
        quantity: 1_000_000,
        max_per_user: undefined,
        start_at: '2026-01-01T00:00:00Z',
        end_at: '2027-01-01T00:00:00Z',
      },
      // Three qualifying transactions and 15 dollars in all per link: refunds that undo a fulfilment happen.
      {
        ...cardLinked,
        start_at: '2026-01-01T00:00:00Z',
        end_at: '2030-01-01T00:00:00Z',
        max_linkage: 100_000,
        num_qualifying: 3,
        maximum_allowance: 1500,
      },
    ]);
  });
  afterAll(() => api.close());

  it('keeps every statement equal to the sum of what happened, and to the auditor’s recompute', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 5, maxLength: 25 }), async (actions) => {
        run += 1;
        const firstDay = clock.now().toISOString().slice(0, 10);
        const partner = await api.createPartner(`Books ${run}`);
        const as = (method: string, path: string, body?: unknown) => api.call(method, path, { apiKey: partner.apiKey, body });
        const buyer = await buyerWithCard({ call: (m, p, b) => as(m, p, b) }, partner.apiKey, `books${run}@example.com`);
        const link = (await as('POST', '/card_links', { user_id: buyer.userId, deal_id: cardLinked.id })).body.card_link;
        // Transactions are dated a minute before each step: after the link.
        clock.advance(120_000);
        const purchases: Array<{ id: string; amount: number; coupons: string[] }> = [];
        let sold = 0;
        let refunded = 0;
        const expect200 = (reply: Reply, kind: keyof typeof EXPECTED) => {
          if (!EXPECTED[kind].includes(reply.status)) throw new Error(`${kind} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
        };
        for (const step of actions) {
          const purchase = purchases.length ? purchases[(step as { pick?: number }).pick! % purchases.length] : undefined;
          switch (step.kind) {
            case 'advance':
              clock.advance(step.hours * 3_600_000);
              break;
            case 'buy': {
              const reply = await as('POST', '/purchases', {
                deal_id: spaDay.id,
                user_id: buyer.userId,
                credit_card_id: buyer.cardId,
                quantity: step.quantity,
                expected_price_per_unit: PRICE,
              });
              expect200(reply, 'buy');
              const p = reply.body.purchase;
              purchases.push({ id: p.id, amount: PRICE * step.quantity, coupons: p.coupons.map((c: { id: string }) => c.id) });
              sold += PRICE * step.quantity;
              break;
            }
            case 'refund': {
              const coupons =
                purchase && step.coupons.length
                  ? [...new Set(step.coupons.map((i) => purchase.coupons[i % purchase.coupons.length]))]
                  : undefined;
              const reply = await as('POST', `/purchases/${purchase?.id ?? 'none'}/refunds`, {
                reason: 'requested_by_customer',
                ...(coupons ? { coupon_ids: coupons } : {}),
              });
              expect200(reply, 'refund');
              if (reply.status === 201) {
                if (reply.body.refund.state !== 'succeeded') throw new Error(`a refund ${reply.body.refund.state}`);
                refunded += reply.body.refund.amount;
              }
              break;
            }
            case 'redeem':
            case 'rollback': {
              const coupon = purchase?.coupons[(step.pick >> 3) % purchase.coupons.length] ?? 'none';
              const reply =
                step.kind === 'redeem'
                  ? await as('PUT', `/coupons/${coupon}/redeem`)
                  : await as('POST', `/coupons/${coupon}/redemption_rollbacks`, { reason: 'other' });
              expect200(reply, step.kind);
              break;
            }
            case 'card': {
              const reply = await as('PUT', `/card_links/${link.id}/transactions/${encodeURIComponent(REFERENCES[step.pick])}`, {
                phase: step.phase,
                transaction_amount: step.amount,
                transaction_date: new Date(clock.now().getTime() - 60_000).toISOString().slice(0, 19),
              });
              expect200(reply, 'card');
              break;
            }
          }
        }
        clock.advance(26 * 3_600_000);
        await api.settle();
        const lastDay = clock.now().toISOString().slice(0, 10);
        const statements = (await as('GET', `/v1/settlements?from=${firstDay}&to=${lastDay}`)).body.settlements as Array<
          Record<string, any>
        >;
        const sum = (key: string) => statements.filter((s) => s.date < lastDay).reduce((n, s) => n + (s[key] as number), 0);
        const closed = statements.filter((s) => s.state === 'closed');
        // The statements are what the answers said happened.
        expect([sum('gross_sales_cents'), sum('refunds_cents')]).toEqual([sold, refunded]);
        for (const p of purchases) {
          const answered = (await as('GET', `/purchases/${p.id}`)).body.purchase;
          const back = answered.amount_refunded ?? 0;
          expect(back).toBeLessThanOrEqual(p.amount);
          if ((answered.refunds ?? []).flatMap((r: { coupon_ids: string[] }) => r.coupon_ids).length === p.coupons.length)
            expect(back).toBe(p.amount);
        }
        const transactions = (await as('GET', `/card_links/${link.id}/transactions`)).body.card_transactions as Array<
          Record<string, number>
        >;
        for (const t of transactions) {
          expect(t.incentive_reversed_cents).toBeLessThanOrEqual(t.incentive_cents);
          expect(t.fee_reversed_cents).toBeLessThanOrEqual(t.fee_cents);
        }
        const total = (key: string) => transactions.reduce((n, t) => n + t[key], 0);
        expect([sum('incentives_credited_cents'), sum('incentives_reversed_cents'), sum('fees_cents'), sum('fees_reversed_cents')]).toEqual(
          [total('incentive_cents'), total('incentive_reversed_cents'), total('fee_cents'), total('fee_reversed_cents')],
        );
        // Every closed day, to the cent and to its digest, is what the log alone says.
        const lines = auditedLines(await api.get(EventStore).readAll({ after: null, maxCount: 10_000_000 }));
        for (const day of closed) {
          const { csv: _csv, ...audited } = auditedDay(lines, partner.partnerId, day.date);
          expect(Object.fromEntries(Object.keys(audited).map((k) => [k, day[k]]))).toEqual(audited);
        }
      }),
      { numRuns: 12, seed: 20261126, endOnFailure: true },
    );
  }, 240_000);
});
