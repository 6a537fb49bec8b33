import { CannotFulfil, fold, ValidationFailed } from '@deals/kernel';
import { deciderSpec } from '@deals/testing';
import fc from 'fast-check';
import {
  buyerStanding,
  HoldLapsed,
  Inventory,
  inventoryDecider,
  liveHeld,
  OverPerUserLimit,
  unitsLeft,
  unitsOf,
} from './inventory.decider';
import { InventoryEvent } from './inventory.events';

const given = deciderSpec(inventoryDecider);
const t0 = new Date('2026-06-15T12:00:00Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
const stocked = (total: number): InventoryEvent => ({ type: 'InventoryStocked', data: { dealId: 'd1', total } });
const held = (holdId: string, quantity: number, minutes = 0): InventoryEvent => ({
  type: 'UnitsHeld',
  data: { dealId: 'd1', holdId, quantity, expiresAt: at(minutes + 5).toISOString() },
});
/** Sales and releases name the hold's expiry: held at `minutes` (after t0), it expires five minutes later. */
const sold = (holdId: string, quantity: number, minutes = 0): InventoryEvent => ({
  type: 'UnitsSold',
  data: { dealId: 'd1', holdId, quantity, expiresAt: at(minutes + 5).toISOString() },
});
const released = (holdId: string, quantity: number, reason: 'released' | 'payment_failed' | 'expired', minutes = 0): InventoryEvent => ({
  type: 'UnitsReleased',
  data: { dealId: 'd1', holdId, quantity, expiresAt: at(minutes + 5).toISOString(), reason },
});
const stock = (total: number) => ({ type: 'StockUnits' as const, data: { dealId: 'd1', total } });
const hold = (holdId: string, quantity: number) => ({ type: 'HoldUnits' as const, data: { dealId: 'd1', holdId, quantity } });
const sell = (holdId: string) => ({ type: 'SellHeldUnits' as const, data: { dealId: 'd1', holdId } });
const release = (holdId: string) => ({ type: 'ReleaseHold' as const, data: { dealId: 'd1', holdId, reason: 'released' as const } });
const expire = (holdId: string) => ({ type: 'ReleaseExpiredHold' as const, data: { dealId: 'd1', holdId } });

describe('inventory decider', () => {
  describe('stocking', () => {
    it('stocks, even zero units, and ignores the same total', () => {
      given([])
        .when(stock(50))
        .then([stocked(50)]);
      given([])
        .when(stock(0))
        .then([stocked(0)]);
      given([stocked(50)])
        .when(stock(50))
        .then([]);
      given([stocked(50)])
        .when(stock(80))
        .then([stocked(80)]);
    });
    it('refuses a negative or fractional total, or one below what is sold', () => {
      given([])
        .when(stock(-1))
        .thenThrows(ValidationFailed, { issues: [expect.objectContaining({ field: 'quantity' })] });
      given([]).when(stock(1.5)).thenThrows(ValidationFailed);
      given([stocked(10), held('h1', 4), sold('h1', 4)])
        .when(stock(3))
        .thenThrows(ValidationFailed);
    });
    it('refuses a total below the units sold and those held live (they sell when claimed or paid); a lapsed hold counts for nothing', () => {
      const history = [stocked(10), held('h1', 4), sold('h1', 4), held('h2', 3)];
      given(history)
        .when(stock(6), t0)
        .thenThrows(ValidationFailed, {
          issues: [
            expect.objectContaining({
              field: 'quantity',
              message: 'cannot be below the 4 units already sold and the 3 held in open reservations and purchases',
            }),
          ],
        });
      given(history)
        .when(stock(7), t0)
        .then([stocked(7)]);
      given(history)
        .when(stock(4), at(6))
        .then([stocked(4)]);
    });
  });

  describe('holding', () => {
    it('holds units for five minutes while enough are left', () => {
      given([stocked(10)])
        .when(hold('h1', 4), t0)
        .then([held('h1', 4)]);
      given([stocked(10), held('h1', 8)])
        .when(hold('h2', 2), t0)
        .then([held('h2', 2)]);
    });
    it('refuses more than is left, counting live holds and sales', () => {
      given([stocked(10), held('h1', 8)])
        .when(hold('h2', 3), t0)
        .thenThrows(CannotFulfil, { message: 'only 2 units left' });
      given([stocked(2), held('h1', 2), sold('h1', 2)])
        .when(hold('h2', 1), t0)
        .thenThrows(CannotFulfil, { message: 'the deal is sold out' });
      given([stocked(0)])
        .when(hold('h1', 1), t0)
        .thenThrows(CannotFulfil);
    });
    it('does not count a hold past its expiry, whether or not it was released', () => {
      given([stocked(10), held('h1', 8)])
        .when(hold('h2', 3), at(6))
        .then([held('h2', 3, 6)]);
    });
    it('holds to the whole second: five minutes, rounded up', () => {
      const heldUntil = (iso: string) =>
        ({ type: 'UnitsHeld', data: { dealId: 'd1', holdId: 'h1', quantity: 1, expiresAt: iso } }) as InventoryEvent;
      given([stocked(10)])
        .when(hold('h1', 1), new Date('2026-06-15T12:00:00.000Z'))
        .then([heldUntil('2026-06-15T12:05:00.000Z')]);
      given([stocked(10)])
        .when(hold('h1', 1), new Date('2026-06-15T12:00:00.001Z'))
        .then([heldUntil('2026-06-15T12:05:01.000Z')]);
      given([stocked(10)])
        .when(hold('h1', 1), new Date('2026-06-15T12:00:00.999Z'))
        .then([heldUntil('2026-06-15T12:05:01.000Z')]);
    });
    it('refuses a quantity below one', () =>
      given([stocked(10)])
        .when(hold('h1', 0), t0)
        .thenThrows(ValidationFailed));
    it('holds at most 1,000 units for one purchase, however many are left', () => {
      given([stocked(5000)])
        .when(hold('h1', 1000), t0)
        .then([held('h1', 1000)]);
      given([stocked(5000)])
        .when(hold('h1', 1001), t0)
        .thenThrows(ValidationFailed, {
          issues: [expect.objectContaining({ field: 'quantity', message: 'must be a whole number from 1 to 1000' })],
        });
    });
    it('changes nothing for a hold id it already has', () => {
      given([stocked(10), held('h1', 1)])
        .when(hold('h1', 1), t0)
        .then([]);
      given([stocked(10), held('h1', 1), sold('h1', 1)])
        .when(hold('h1', 1), t0)
        .then([]);
    });
  });

  describe('selling and releasing', () => {
    it('sells a live hold once', () => {
      given([stocked(10), held('h1', 3)])
        .when(sell('h1'), at(4))
        .then([sold('h1', 3)]);
      given([stocked(10), held('h1', 3), sold('h1', 3)])
        .when(sell('h1'), at(4))
        .then([]);
    });
    it('refuses to sell an expired or released hold, as lapsed (a sale may take fresh units in its place)', () => {
      given([stocked(10), held('h1', 3)])
        .when(sell('h1'), at(5))
        .thenThrows(HoldLapsed, { message: 'the reservation has expired or was released' });
      given([stocked(10), held('h1', 3), released('h1', 3, 'released')])
        .when(sell('h1'), at(1))
        .thenThrows(HoldLapsed);
      given([stocked(10)])
        .when(sell('h1'), at(1))
        .thenThrows(CannotFulfil);
    });
    it("takes a sale's fresh units only while the deal is on sale, and keeps a hold taken already whatever the deal's state", () => {
      const offSale = (holdId: string) => ({
        type: 'HoldUnits' as const,
        data: { ...hold(holdId, 2).data, offSale: 'the deal is not on sale' },
      });
      given([stocked(10)])
        .when(offSale('h1-r'), t0)
        .thenThrows(CannotFulfil, { message: 'the deal is not on sale' });
      given([stocked(10), held('h1-r', 2)])
        .when(offSale('h1-r'), at(1))
        .then([]);
      given([stocked(10), held('h1-r', 2), sold('h1-r', 2)])
        .when(offSale('h1-r'), at(1))
        .then([]);
      // Taken and released (or lapsed and released): kept closed; its sale is then refused as lapsed.
      given([stocked(10), held('h1-r', 2), released('h1-r', 2, 'expired')])
        .when(offSale('h1-r'), at(6))
        .then([]);
    });
    it('releases an open hold once; the units are left again', () => {
      given([stocked(10), held('h1', 3)])
        .when(release('h1'), at(1))
        .then([released('h1', 3, 'released')]);
      given([stocked(10), held('h1', 3), released('h1', 3, 'released')])
        .when(release('h1'), at(1))
        .then([]);
      // A partner's release of a hold a claim has sold is refused (its units are not returned); other releases of it change nothing.
      given([stocked(10), held('h1', 3), sold('h1', 3)])
        .when(release('h1'), at(1))
        .thenThrows(ValidationFailed, { message: 'id is being claimed: its units are sold' });
      given([stocked(10), held('h1', 3), sold('h1', 3)])
        .when({ type: 'ReleaseHold', data: { dealId: 'd1', holdId: 'h1', reason: 'payment_failed' } }, at(1))
        .then([]);
      given([stocked(3), held('h1', 3), released('h1', 3, 'released')])
        .when(hold('h2', 3), at(1))
        .then([held('h2', 3, 1)]);
    });
    it('releases an expired hold only once it has expired, and never a sold one', () => {
      given([stocked(10), held('h1', 3)])
        .when(expire('h1'), at(4))
        .then([]);
      given([stocked(10), held('h1', 3)])
        .when(expire('h1'), at(5))
        .then([released('h1', 3, 'expired')]);
      given([stocked(10), held('h1', 3), sold('h1', 3)])
        .when(expire('h1'), at(9))
        .then([]);
    });
  });

  describe('the per-user limit', () => {
    const ann = 'p1/ann';
    const heldFor = (holdId: string, quantity: number, buyer: string, minutes = 0): InventoryEvent =>
      ({ ...held(holdId, quantity, minutes), data: { ...held(holdId, quantity, minutes).data, buyer } }) as InventoryEvent;
    const soldTo = (holdId: string, quantity: number, buyer: string): InventoryEvent => ({
      type: 'UnitsSold',
      data: { dealId: 'd1', holdId, quantity, expiresAt: at(5).toISOString(), buyer },
    });
    const holdFor = (holdId: string, quantity: number, buyer: string, maxPerBuyer?: number) => ({
      type: 'HoldUnits' as const,
      data: { dealId: 'd1', holdId, quantity, buyer, maxPerBuyer },
    });
    const sellTo = (holdId: string, buyer: string, maxPerBuyer?: number) => ({
      type: 'SellHeldUnits' as const,
      data: { dealId: 'd1', holdId, buyer, maxPerBuyer },
    });

    it('holds for a buyer up to the limit, counting their sales and live holds, and names the buyer', () => {
      given([stocked(10), heldFor('h1', 1, ann), soldTo('h1', 1, ann)])
        .when(holdFor('h2', 1, ann, 2), t0)
        .then([heldFor('h2', 1, ann)]);
      given([stocked(10), heldFor('h1', 1, ann), soldTo('h1', 1, ann), heldFor('h2', 1, ann)])
        .when(holdFor('h3', 1, ann, 2), t0)
        .thenThrows(OverPerUserLimit, { message: 'at most 2 per user; already bought 1 and holding 1' });
      given([stocked(10), heldFor('h1', 2, ann), sold('h1', 2)])
        .when(holdFor('h2', 1, ann, 2), t0)
        .thenThrows(CannotFulfil, { message: 'at most 2 per user; already bought 2' });
    });
    it('counts no other buyer, no expired hold, no released hold, and nothing without a limit', () => {
      given([stocked(10), heldFor('h1', 2, 'p1/bob'), soldTo('h1', 2, 'p1/bob')])
        .when(holdFor('h2', 2, ann, 2), t0)
        .then([heldFor('h2', 2, ann)]);
      given([stocked(10), heldFor('h1', 2, 'p2/ann')])
        .when(holdFor('h2', 2, ann, 2), t0)
        .then([heldFor('h2', 2, ann)]);
      given([stocked(10), heldFor('h1', 2, ann)])
        .when(holdFor('h2', 2, ann, 2), at(6))
        .then([heldFor('h2', 2, ann, 6)]);
      given([stocked(10), heldFor('h1', 2, ann), released('h1', 2, 'payment_failed')])
        .when(holdFor('h2', 2, ann, 2), t0)
        .then([heldFor('h2', 2, ann)]);
      given([stocked(10), heldFor('h1', 5, ann), soldTo('h1', 5, ann)])
        .when(holdFor('h2', 5, ann), t0)
        .then([heldFor('h2', 5, ann)]);
    });
    it('counts a claimed reservation when it is sold to its buyer, not when it was held', () => {
      given([stocked(10), held('r1', 1), heldFor('h1', 1, ann), soldTo('h1', 1, ann)])
        .when(sellTo('r1', ann, 2), t0)
        .then([soldTo('r1', 1, ann)]);
      given([stocked(10), held('r1', 2), heldFor('h1', 1, ann), soldTo('h1', 1, ann)])
        .when(sellTo('r1', ann, 2), t0)
        .thenThrows(OverPerUserLimit, { message: 'at most 2 per user; already bought 1' });
      // Two claims of one user at once: the first sale counts against the second.
      given([stocked(10), held('r1', 1), held('r2', 1), soldTo('r1', 1, ann)])
        .when(sellTo('r2', ann, 1), t0)
        .thenThrows(OverPerUserLimit);
    });
    it('refuses to sell a hold sold to one user again to another (two claims of one reservation); the same sale again changes nothing', () => {
      given([stocked(10), held('r1', 1), soldTo('r1', 1, ann)])
        .when(sellTo('r1', 'p1/bob', 5), t0)
        .thenThrows(ValidationFailed, {
          issues: [expect.objectContaining({ field: 'id', message: 'is already claimed by another user' })],
        });
      given([stocked(10), held('r1', 1), soldTo('r1', 1, ann)])
        .when(sellTo('r1', ann, 1), t0)
        .then([]);
      given([stocked(10), held('r1', 1), sold('r1', 1)])
        .when(sellTo('r1', 'p1/bob', 5), t0)
        .then([]);
    });
    it('is no lapse: a sale refused by the limit takes no fresh units', () => {
      given([stocked(10), held('r1', 2), soldTo('h1', 1, ann)])
        .when(sellTo('r1', ann, 2), t0)
        .thenThrows(OverPerUserLimit);
      expect(new OverPerUserLimit('at most 2 per user')).not.toBeInstanceOf(HoldLapsed);
    });
    it('does not count a hold taken for the buyer twice when it is sold', () => {
      given([stocked(10), heldFor('h1', 2, ann)])
        .when(sellTo('h1', ann, 2), t0)
        .then([soldTo('h1', 2, ann)]);
      given([stocked(10), heldFor('h1', 2, ann), sold('h1', 2)])
        .when(holdFor('h2', 1, 'p1/bob', 1), t0)
        .then([heldFor('h2', 1, 'p1/bob')]);
    });
  });

  describe('counting live holds without walking them all', () => {
    it('counts a hold out at its expiry instant, to the millisecond, across second boundaries', () => {
      const heldAt = (holdId: string, expiresAt: string): InventoryEvent => ({
        type: 'UnitsHeld',
        data: { dealId: 'd1', holdId, quantity: 1, expiresAt },
      });
      const fold = [
        stocked(3),
        heldAt('a', '2026-06-15T12:05:00.999Z'),
        heldAt('b', '2026-06-15T12:05:01.000Z'),
        heldAt('c', '2026-06-15T12:05:00.000Z'),
      ].reduce(inventoryDecider.evolve, inventoryDecider.initialState());
      const at = (iso: string) => liveHeld(fold, Date.parse(iso));
      expect([
        at('2026-06-15T12:04:59.999Z'),
        at('2026-06-15T12:05:00.000Z'),
        at('2026-06-15T12:05:00.998Z'),
        at('2026-06-15T12:05:00.999Z'),
        at('2026-06-15T12:05:01.000Z'),
      ]).toEqual([3, 2, 2, 1, 0]);
      given([stocked(3), heldAt('a', '2026-06-15T12:05:00.999Z'), heldAt('b', '2026-06-15T12:05:01.000Z')])
        .when(hold('h', 2), new Date('2026-06-15T12:05:00.999Z'))
        .then([{ type: 'UnitsHeld', data: { dealId: 'd1', holdId: 'h', quantity: 2, expiresAt: '2026-06-15T12:10:01.000Z' } }]);
    });

    it('keeps one entry per expiry instant, however many holds expire then, released on time or not', () => {
      const events = [stocked(5000), ...Array.from({ length: 3000 }, (_, i) => held(`h${i}`, 1, i % 3))];
      const state = events.reduce(inventoryDecider.evolve, inventoryDecider.initialState());
      expect([unitsOf(state).held, unitsOf(state).expiring.size]).toEqual([3000, 3]);
      // Long after all expired, never released: none counts, and still three entries to look at.
      expect([liveHeld(state, at(60).getTime()), liveHeld(state, at(6).getTime()), liveHeld(state, at(4).getTime())]).toEqual([
        0, 1000, 3000,
      ]);
    });

    it('equals the sum over every open hold, whatever the holds, closes and clock (property)', () => {
      const op = fc.oneof(
        fc.record({
          kind: fc.constant('hold' as const),
          id: fc.nat({ max: 30 }),
          quantity: fc.integer({ min: 1, max: 4 }),
          expiresIn: fc.integer({ min: -5_000, max: 310_000 }),
          buyer: fc.option(fc.constantFrom('p/a', 'p/b'), { nil: undefined }),
        }),
        fc.record({ kind: fc.constantFrom('sell' as const, 'release' as const), id: fc.nat({ max: 30 }) }),
      );
      fc.assert(
        fc.property(
          fc.array(op, { maxLength: 80 }),
          fc.array(fc.integer({ min: -10_000, max: 320_000 }), { minLength: 1, maxLength: 6 }),
          (ops, probes) => {
            let state: Inventory = inventoryDecider.evolve(inventoryDecider.initialState(), stocked(1000));
            const open = new Map<string, { quantity: number; expiresAt: number; buyer?: string }>();
            for (const o of ops) {
              const holdId = `h${o.id}`;
              if (o.kind === 'hold') {
                if (open.has(holdId)) continue;
                const expiresAt = t0.getTime() + o.expiresIn;
                open.set(holdId, { quantity: o.quantity, expiresAt, buyer: o.buyer });
                state = inventoryDecider.evolve(state, {
                  type: 'UnitsHeld',
                  data: {
                    dealId: 'd1',
                    holdId,
                    quantity: o.quantity,
                    expiresAt: new Date(expiresAt).toISOString(),
                    ...(o.buyer ? { buyer: o.buyer } : {}),
                  },
                });
              } else {
                const h = open.get(holdId);
                if (!h) continue;
                open.delete(holdId);
                state = inventoryDecider.evolve(
                  state,
                  o.kind === 'sell' ? sold(holdId, h.quantity) : released(holdId, h.quantity, 'released'),
                );
              }
            }
            for (const probe of probes) {
              const now = t0.getTime() + probe;
              const expected = [...open.values()].reduce((n, h) => (h.expiresAt > now ? n + h.quantity : n), 0);
              expect(liveHeld(state, now)).toBe(expected);
            }
            expect(unitsOf(state).held).toBe([...open.values()].reduce((n, h) => n + h.quantity, 0));
            for (const buyer of ['p/a', 'p/b'])
              expect(unitsOf(state).buyerHolds.get(buyer)?.size ?? 0).toBe([...open.values()].filter((h) => h.buyer === buyer).length);
          },
        ),
      );
    });
  });

  describe("a sandbox's own copy", () => {
    const SANDBOX = '6f1c2b9e-0d4a-4c1e-9a57-3b8f2e1d7c40_test';
    const mark = { sandbox: SANDBOX };
    const stockedCopy = (total: number): InventoryEvent => ({ type: 'InventoryStocked', data: { dealId: 'd1', total, ...mark } });
    const marked = (event: InventoryEvent): InventoryEvent => ({ ...event, data: { ...event.data, ...mark } }) as InventoryEvent;
    const holdStocking = (holdId: string, quantity: number, total: number) => ({
      type: 'HoldUnits' as const,
      data: { dealId: 'd1', holdId, quantity, stock: { total, sandbox: SANDBOX } },
    });

    it('is stocked by its first hold with the total given, then holds on it', () => {
      given([])
        .when(holdStocking('h1', 4, 10), t0)
        .then([stockedCopy(10), marked(held('h1', 4))]);
    });
    it('holds on what the copy has while the live total stays, and is stocked again when it changes', () => {
      given([stockedCopy(10), marked(held('h1', 8))])
        .when(holdStocking('h2', 2, 10), t0)
        .then([marked(held('h2', 2))]);
      given([stockedCopy(10), marked(held('h1', 8))])
        .when(holdStocking('h2', 3, 10), t0)
        .thenThrows(CannotFulfil, { message: 'only 2 units left' });
      given([stockedCopy(10), marked(held('h1', 8))])
        .when(holdStocking('h2', 3, 500), t0)
        .then([stockedCopy(500), marked(held('h2', 3))]);
    });
    it('is never stocked below what it sold and holds when the live total falls', () => {
      given([stockedCopy(10), marked(held('h1', 8)), marked(sold('h1', 8))])
        .when(holdStocking('h2', 1, 5), t0)
        .thenThrows(CannotFulfil, { message: 'the deal is sold out' });
      given([stockedCopy(10), marked(held('h1', 8)), marked(sold('h1', 8)), stockedCopy(8)])
        .when(holdStocking('h2', 1, 5), t0)
        .thenThrows(CannotFulfil, { message: 'the deal is sold out' });
    });
    it('refuses a first hold beyond the total, stocking nothing', () => {
      given([])
        .when(holdStocking('h1', 11, 10), t0)
        .thenThrows(CannotFulfil, { message: 'only 10 units left' });
      given([])
        .when(holdStocking('h1', 1, 0), t0)
        .thenThrows(CannotFulfil, { message: 'the deal is sold out' });
      given([])
        .when(holdStocking('h1', 1, -1), t0)
        .thenThrows(ValidationFailed);
    });
    it('marks every event it decides with the sandbox', () => {
      const history = [stockedCopy(10), marked(held('h1', 3)), marked(held('h2', 2))];
      given(history)
        .when(sell('h1'), t0)
        .then([marked(sold('h1', 3))]);
      given(history)
        .when(release('h2'), t0)
        .then([marked(released('h2', 2, 'released'))]);
      given(history)
        .when(expire('h2'), at(6))
        .then([marked(released('h2', 2, 'expired'))]);
      given(history)
        .when(stock(12), t0)
        .then([stockedCopy(12)]);
    });
    it("leaves the deal's own inventory as it was: no mark, and a hold there without stocking is refused until it is stocked", () => {
      given([]).when(hold('h1', 1), t0).thenThrows(CannotFulfil, { message: 'the deal is sold out' });
      given([stocked(10)])
        .when(hold('h1', 4), t0)
        .then([held('h1', 4)]);
      expect(inventoryDecider.evolve(inventoryDecider.initialState(), stocked(10))).not.toHaveProperty('sandbox');
    });
  });

  describe('a deal with a long history', () => {
    const history = (sales: number): InventoryEvent[] => [
      stocked(sales + 10),
      ...Array.from({ length: sales }, (_, i) => [held(`h${i}`, 1), sold(`h${i}`, 1)]).flat(),
    ];
    it('still knows a hold sold thousands of sales ago: a retried sale or hold changes nothing', () => {
      given(history(5000)).when(sell('h0'), at(60)).then([]);
      given(history(5000)).when(hold('h0', 1), at(60)).then([]);
    });
    it('folds twenty thousand sales, and a new event leaves the earlier state as it was', () => {
      const fold = (events: InventoryEvent[]) => events.reduce(inventoryDecider.evolve, inventoryDecider.initialState());
      const before = fold(history(20_000));
      const next = inventoryDecider.evolve(before, held('new', 1));
      // Persistent maps: the earlier state is untouched and shares what did not change.
      expect([before.status, unitsOf(before).holds.has('new')]).toEqual(['stocked', false]);
      expect([unitsOf(next).holds.has('new'), unitsOf(next).closed.size]).toEqual([true, 20_000]);
    });
  });
});

describe("a buyer's standing (what the per-user limit counts, and a dry run shows)", () => {
  const forBuyer = (event: InventoryEvent, buyer: string): InventoryEvent =>
    ({ ...event, data: { ...event.data, buyer } }) as InventoryEvent;
  const inventory = fold(inventoryDecider, [
    stocked(20),
    forBuyer(held('h1', 2), 'u1'),
    forBuyer(sold('h1', 2), 'u1'),
    forBuyer(held('h2', 3, 2), 'u1'),
    forBuyer(held('h3', 1, -10), 'u1'),
    forBuyer(held('h4', 4), 'u2'),
  ]);

  it('counts units sold to the buyer and their live holds, but not an expired hold or the one named', () => {
    expect(buyerStanding(inventory, 'u1', at(3).getTime())).toEqual({ bought: 2, holding: 3 });
    expect(buyerStanding(inventory, 'u1', at(3).getTime(), 'h2')).toEqual({ bought: 2, holding: 0 });
    expect(buyerStanding(inventory, 'nobody', at(3).getTime())).toEqual({ bought: 0, holding: 0 });
    expect(unitsLeft(inventory, at(3).getTime())).toBe(20 - 2 - 3 - 4);
  });

  it('is what the decider refuses by', () => {
    const limit = (maxPerBuyer: number, quantity: number) => ({
      type: 'HoldUnits' as const,
      data: { dealId: 'd1', holdId: 'h9', quantity, buyer: 'u1', maxPerBuyer },
    });
    expect(() => inventoryDecider.decide(limit(6, 2), inventory, at(3))).toThrow('at most 6 per user; already bought 2 and holding 3');
    expect(inventoryDecider.decide(limit(6, 1), inventory, at(3))).toHaveLength(1);
  });
});
