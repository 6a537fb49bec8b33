import { EventStore, ManualClock } from '@deals/kernel';
import fc from 'fast-check';
import { Reply, TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';

const HOLD_TTL_MS = 5 * 60_000;
const UNITS = 20;

/** One step; the steps of a batch run at once. Indexes pick among the reservations made so far. */
type Action =
  | { kind: 'reserve'; quantity: number }
  | { kind: 'claim'; pick: number }
  | { kind: 'release'; pick: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'buy'; quantity: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('reserve' as const), quantity: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('claim' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.constant(HOLD_TTL_MS + 1000), fc.integer({ min: 1000, max: 2 * 60_000 })),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('buy' as const), quantity: fc.integer({ min: 1, max: 5 }) }) },
);
/** Batches of one to three steps, run one batch after the other. */
const scenario = fc.array(fc.array(action, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 8 });

/** What a step may answer; anything else (a 500 above all) fails the run. */
const EXPECTED: Record<Action['kind'], number[]> = {
  reserve: [200, 422], // 422: not enough units left
  claim: [200, 422], // 422: a lapsed or released reservation and no units left for a fresh hold
  release: [200, 422], // 422: already claimed
  buy: [200, 409, 422], // 409: the user's previous purchase is still being charged
  advance: [],
};

interface Folded {
  total: number;
  sold: number;
  holds: Map<string, { quantity: number; expiresAt: number }>;
}

/** The inventory stream folded here, independently of the service's decider. */
function fold(events: { type: string; data: unknown }[]): Folded {
  const state: Folded = { total: 0, sold: 0, holds: new Map() };
  for (const { type, data } of events) {
    const d = data as { total: number; holdId: string; quantity: number; expiresAt: string };
    if (type === 'InventoryStocked') state.total = d.total;
    else if (type === 'UnitsHeld') state.holds.set(d.holdId, { quantity: d.quantity, expiresAt: Date.parse(d.expiresAt) });
    else if (type === 'UnitsSold') {
      state.sold += d.quantity;
      state.holds.delete(d.holdId);
    } else if (type === 'UnitsReleased') state.holds.delete(d.holdId);
  }
  return state;
}

describe('inventory under random interleavings of reserve, claim, release, expiry and stored-card purchases', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let userId: string;
  let cardId: string;
  let runNumber = 0;

  beforeAll(async () => {
    api = await TestApi.start({ clock, env: { SLOW_CARD_MS: '0' } });
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([chicago]);
    userId = (await api.call('POST', '/users', { apiKey, body: { email: 'property-buyer@example.com' } })).body.user_id;
    cardId = (
      await api.call('POST', '/credit_cards', {
        apiKey,
        body: { user_id: userId, number: '4242424242424242', verification_value: '123', month: 12, year: 2030, zip_code: '60601' },
      })
    ).body.credit_card_id;
    expect(cardId).toEqual(expect.any(String));
  });
  afterAll(() => api?.close());

  it('keeps total = sold + live-held + left, number_sold = sold, and one coupon per unit of every charged purchase', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (batches) => {
        const dealId = `interleaving-${++runNumber}`;
        await api.importDeals([{ ...spaDay, id: dealId, quantity: UNITS, max_per_user: undefined }]);
        const reservations: string[] = [];
        const purchases = new Set<string>();
        const log: string[] = [];

        const run = async (step: Action): Promise<void> => {
          let reply: Reply;
          switch (step.kind) {
            case 'advance':
              clock.advance(step.ms);
              log.push(`advance ${step.ms}`);
              return;
            case 'reserve':
              reply = await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: dealId, num_bought: step.quantity } });
              if (reply.status === 200) reservations.push(reply.body.purchase.id);
              break;
            case 'buy':
              reply = await api.call('POST', '/purchases', {
                apiKey,
                body: {
                  deal_id: dealId,
                  quantity: step.quantity,
                  user_id: userId,
                  credit_card_id: cardId,
                  expected_price_per_unit: spaDay.current_price,
                },
              });
              break;
            case 'claim':
            case 'release': {
              if (reservations.length === 0) return;
              const id = reservations[step.pick % reservations.length];
              reply =
                step.kind === 'claim'
                  ? await api.call('PUT', `/purchases/${id}/claim`, { apiKey, body: { user_id: userId } })
                  : await api.call('PUT', `/purchases/${id}/release`, { apiKey });
              break;
            }
          }
          log.push(`${JSON.stringify(step)} -> ${reply.status} ${reply.status === 200 ? '' : JSON.stringify(reply.body)}`);
          if (reply.body?.purchase?.id) purchases.add(reply.body.purchase.id);
          if (!EXPECTED[step.kind].includes(reply.status))
            throw new Error(`unexpected ${reply.status} for ${JSON.stringify(step)}: ${JSON.stringify(reply.body)}\n${log.join('\n')}`);
        };

        for (const batch of batches) await Promise.all(batch.map(run));
        await api.settle();

        const inventory = fold(await api.get(EventStore).readStream(`inventory-${dealId}`));
        const now = clock.now().getTime();
        const liveHeld = [...inventory.holds.values()].reduce((sum, h) => (h.expiresAt > now ? sum + h.quantity : sum), 0);
        const deal = (await api.call('GET', `/deals/${dealId}`, { apiKey })).body.deal;
        const where = `deal ${dealId}, steps:\n${log.join('\n')}`;
        expect({ where, total: inventory.total }).toEqual({ where, total: UNITS });
        expect({ where, balance: inventory.sold + liveHeld + deal.num_left }).toEqual({ where, balance: inventory.total });
        expect({ where, numberSold: deal.number_sold }).toEqual({ where, numberSold: inventory.sold });

        let unitsCharged = 0;
        for (const id of purchases) {
          const purchase = (await api.call('GET', `/purchases/${id}`, { apiKey })).body.purchase;
          if (purchase.payment_state !== 'charged') continue;
          unitsCharged += purchase.number_bought;
          expect({ where, id, coupons: purchase.coupons.length }).toEqual({ where, id, coupons: purchase.number_bought });
        }
        // Every unit sold belongs to exactly one charged purchase.
        expect({ where, unitsCharged }).toEqual({ where, unitsCharged: inventory.sold });
      }),
      { numRuns: 15 },
    );
  }, 60_000);
});
