import { DomainError } from '@deals/kernel';
import fc from 'fast-check';
import { Inventory, InventoryCommand, inventoryDecider, inventorySnapshots } from './inventory.decider';
import { InventoryEvent } from './inventory.events';

const t0 = Date.parse('2026-06-15T12:00:00Z');
const keyed = inventorySnapshots.keyed!;

/** A command of a random history: holds, sales, releases and expiries of a few hold ids, by a few buyers, at random times. */
const command = fc.record({
  kind: fc.constantFrom('stock', 'hold', 'hold', 'hold', 'sell', 'sell', 'release', 'expire'),
  hold: fc.nat({ max: 40 }),
  quantity: fc.integer({ min: 1, max: 3 }),
  total: fc.integer({ min: 0, max: 60 }),
  buyer: fc.option(fc.constantFrom('p/a', 'p/b', 'p/c'), { nil: undefined }),
  limit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  reason: fc.constantFrom('released' as const, 'payment_failed' as const, 'abandoned' as const),
  seconds: fc.integer({ min: 0, max: 400 }),
});
type Drawn = typeof command extends fc.Arbitrary<infer T> ? T : never;

const toCommand = (d: Drawn): InventoryCommand => {
  const dealId = 'd1';
  const holdId = `h${d.hold}`;
  const forBuyer = { ...(d.buyer === undefined ? {} : { buyer: d.buyer }), ...(d.limit === undefined ? {} : { maxPerBuyer: d.limit }) };
  switch (d.kind) {
    case 'stock':
      return { type: 'StockUnits', data: { dealId, total: d.total } };
    case 'hold':
      return { type: 'HoldUnits', data: { dealId, holdId, quantity: d.quantity, ...forBuyer } };
    case 'sell':
      return { type: 'SellHeldUnits', data: { dealId, holdId, ...forBuyer } };
    case 'release':
      return { type: 'ReleaseHold', data: { dealId, holdId, reason: d.reason } };
    default:
      return { type: 'ReleaseExpiredHold', data: { dealId, holdId } };
  }
};

/** What deciding gives: the events, or the refusal's class and message. */
function outcome(state: Inventory, c: InventoryCommand, now: Date): unknown {
  try {
    return inventoryDecider.decide(c, state, now);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { refused: error.constructor.name, message: error.message };
  }
}

/** A history made by deciding the drawn commands one after the other, time moving forward. */
function history(drawn: Drawn[]): { events: InventoryEvent[]; times: Date[] } {
  let state = inventoryDecider.initialState();
  let now = t0;
  const events: InventoryEvent[] = [];
  const times: Date[] = [];
  for (const d of drawn) {
    now += d.seconds * 250;
    const decided = outcome(state, toCommand(d), new Date(now));
    if (!Array.isArray(decided)) continue;
    for (const e of decided as InventoryEvent[]) {
      state = inventoryDecider.evolve(state, e);
      events.push(e);
      times.push(new Date(now));
    }
  }
  return { events, times };
}

/**
 * The snapshot store as `handleCommand` uses it, in memory: the body as JSON text, the keyed
 * entries with the revision they were saved at, looked up as of a revision.
 */
class Snapshots {
  body: string | null = null;
  at = -1;
  readonly entries = new Map<string, { revision: number; value: string }>();
  save(state: Inventory, revision: number): Inventory {
    this.body = JSON.stringify(inventorySnapshots.toJson(state));
    this.at = revision;
    for (const [key, value] of keyed.entries(state))
      if (!this.entries.has(key)) this.entries.set(key, { revision, value: JSON.stringify(value) });
    return keyed.withoutEntries(state);
  }
  load(): Inventory {
    return inventorySnapshots.fromJson(JSON.parse(this.body!));
  }
  lookup(state: Inventory, keys: readonly string[], revision: number): Inventory {
    const found = keys
      .filter((key) => !keyed.has(state, key))
      .flatMap((key) => {
        const entry = this.entries.get(key);
        return entry && entry.revision <= revision ? [[key, JSON.parse(entry.value)] as const] : [];
      });
    return found.length ? keyed.withEntries(state, found) : state;
  }
}

describe('inventory snapshots', () => {
  it('never disagree with the fold: a state from snapshots (taken at random revisions) decides every command as the whole fold does', () => {
    fc.assert(
      fc.property(
        fc.array(command, { minLength: 1, maxLength: 120 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.array(command, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 0, max: 200 }),
        (drawn, cuts, probes, later) => {
          const { events, times } = history(drawn);
          // Snapshots at the chosen revisions, in order; the state kept in between holds only the entries added since.
          const at = [...new Set(cuts.map((c) => c % Math.max(1, events.length)))].sort((a, b) => a - b);
          const snapshots = new Snapshots();
          let whole = inventoryDecider.initialState();
          let kept = inventoryDecider.initialState();
          events.forEach((event, revision) => {
            whole = inventoryDecider.evolve(whole, event);
            kept = inventoryDecider.evolve(kept, event);
            if (at.includes(revision)) kept = snapshots.save(kept, revision);
          });
          const last = events.length - 1;
          // A restart: the latest snapshot loaded, the events after it folded on it.
          let restarted = snapshots.body === null ? inventoryDecider.initialState() : snapshots.load();
          for (let r = snapshots.at + 1; r <= last; r++) restarted = inventoryDecider.evolve(restarted, events[r]);
          expect(inventorySnapshots.toJson(restarted)).toEqual(inventorySnapshots.toJson(whole));
          expect(inventorySnapshots.toJson(kept)).toEqual(inventorySnapshots.toJson(whole));
          const now = new Date((times.length ? times[times.length - 1].getTime() : t0) + later * 1000);
          for (const probe of probes) {
            const c = toCommand(probe);
            const keys = keyed.keysOf(c);
            const expected = outcome(whole, c, now);
            expect(outcome(snapshots.lookup(restarted, keys, last), c, now)).toEqual(expected);
            expect(outcome(snapshots.lookup(kept, keys, last), c, now)).toEqual(expected);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps a sandbox's copy as its sandbox's, and the deal's own as it was (no sandbox in its body)", () => {
    const sandbox = '6f1c2b9e-0d4a-4c1e-9a57-3b8f2e1d7c40_test';
    const now = new Date(t0);
    const copy = inventoryDecider
      .decide(
        { type: 'HoldUnits', data: { dealId: 'd1', holdId: 'h1', quantity: 2, stock: { total: 5, sandbox } } },
        inventoryDecider.initialState(),
        now,
      )
      .reduce(inventoryDecider.evolve, inventoryDecider.initialState());
    const restored = inventorySnapshots.fromJson(JSON.parse(JSON.stringify(inventorySnapshots.toJson(copy))));
    expect(restored).toMatchObject({ status: 'stocked', sandbox });
    expect(inventoryDecider.decide({ type: 'SellHeldUnits', data: { dealId: 'd1', holdId: 'h1' } }, restored, now)).toEqual([
      expect.objectContaining({ type: 'UnitsSold', data: expect.objectContaining({ sandbox }) }),
    ]);
    const own = inventoryDecider.evolve(inventoryDecider.initialState(), { type: 'InventoryStocked', data: { dealId: 'd1', total: 5 } });
    expect(Object.keys(inventorySnapshots.toJson(own) as object)).toEqual(['stocked', 'total', 'sold', 'holds', 'bought']);
  });

  it('has one shape name, and a body that is plain JSON', () => {
    const { events } = history(
      Array.from({ length: 30 }, (_, i) => ({
        kind: i % 3 === 0 ? 'hold' : i % 3 === 1 ? 'sell' : 'stock',
        hold: Math.floor(i / 3),
        quantity: 1,
        total: 50,
        buyer: 'p/a',
        limit: undefined,
        reason: 'released' as const,
        seconds: 1,
      })),
    );
    const state = events.reduce(inventoryDecider.evolve, inventoryDecider.initialState());
    expect(inventorySnapshots.shape).toMatch(/^inventory\/\d+$/);
    expect(JSON.parse(JSON.stringify(inventorySnapshots.toJson(state)))).toEqual(inventorySnapshots.toJson(state));
    expect(keyed.entries(state).length).toBeGreaterThan(0);
  });
});
