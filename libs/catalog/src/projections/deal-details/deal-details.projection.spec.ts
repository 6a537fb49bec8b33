import { RecordedEvent } from '@deals/kernel';
import { projectionSpec, SpecEvent } from '@deals/testing';
import fc from 'fast-check';
import { DealDetails, dealDetailsProjection, searchFields, unitsLeftAt } from './deal-details.projection';

const spec = projectionSpec(dealDetailsProjection, { occurredAt: '2026-01-01T00:00:00Z' });
const event = (type: string, data: unknown, occurredAt?: string): SpecEvent => ({
  type,
  data,
  ...(occurredAt ? { metadata: { occurredAt } } : {}),
});
const at = (event: RecordedEvent) => Date.parse(event.metadata.occurredAt);
const deal = {
  id: 'spa',
  title: 'Spa',
  type: 'daily-deal',
  category: ' Health & Beauty',
  current_price: 100,
  value: 300,
  start_at: '2026-01-01T00:00:00Z',
  end_at: '2026-01-02T00:00:00Z',
  fulfillment_method: 'printed',
  region_id: 'ny',
  tags: ['calm'],
  locations: [{ address: { latitude: 40.7, longitude: -74 } }, { address: { latitude: 91, longitude: 0 } }, { address: {} }],
};

describe('deal details projection', () => {
  const events = [
    event('DealListed', { deal, state: 'approved' }),
    event('InventoryStocked', { dealId: 'spa', total: 40 }),
    event('DealRevised', { dealId: 'spa', changes: { current_price: 90 }, removed: [] }),
    event('DealStateChanged', { dealId: 'spa', from: 'approved', to: 'in-flight' }),
    event('SomethingElse', { dealId: 'spa' }),
  ];

  it('folds listing, stock, revision and state into one document', () => {
    const listed = spec.when(...events);
    listed.thenChanged({
      _id: 'spa',
      _pos: listed.positionOf(events[3]),
      deal: { ...deal, current_price: 90 },
      state: 'in-flight',
      inventory: { total: 40, sold: 0, held: {} },
      regionId: 'ny',
      type: 'daily-deal',
      categoryKey: 'health & beauty',
      subcategoryKey: null,
      title: 'Spa',
      merchantName: null,
      price: 90,
      value: 300,
      startAt: Date.parse('2026-01-01T00:00:00Z'),
      endAt: Date.parse('2026-01-02T00:00:00Z'),
      numLeft: 40,
      numberSold: 0,
      soldOut: false,
      supplierId: null,
      vendorId: null,
      marketplaceSlug: null,
      tags: ['calm'],
      // out-of-range and missing coordinates are left out rather than stall a 2dsphere index
      locs: [{ type: 'Point', coordinates: [-74, 40.7] }],
    });
  });

  it("leaves a sandbox's inventory events out: the live deal's figures never move with test purchases", () => {
    const sandbox = { sandbox: '6f1c2b9e-0d4a-4c1e-9a57-3b8f2e1d7c40_test' };
    const expiresAt = '2026-01-01T00:05:00Z';
    const tests = [
      event('InventoryStocked', { dealId: 'spa', total: 40, ...sandbox }, '2026-01-01T00:00:01Z'),
      event('UnitsHeld', { dealId: 'spa', holdId: 'h1', quantity: 30, expiresAt, ...sandbox }, '2026-01-01T00:00:01Z'),
      event('UnitsSold', { dealId: 'spa', holdId: 'h1', quantity: 30, expiresAt, ...sandbox }, '2026-01-01T00:00:02Z'),
      event('UnitsHeld', { dealId: 'spa', holdId: 'h2', quantity: 10, expiresAt, ...sandbox }, '2026-01-01T00:00:03Z'),
      event('UnitsReleased', { dealId: 'spa', holdId: 'h2', quantity: 10, expiresAt, reason: 'released', ...sandbox }),
      event('InventoryStocked', { dealId: 'spa', total: 7, ...sandbox }),
    ];
    const listed = spec.when(...events);
    listed.when(...tests).thenChanged();
    // Among live ones, only the live ones count.
    const live = event('UnitsHeld', { dealId: 'spa', holdId: 'h3', quantity: 5, expiresAt }, '2026-01-01T00:00:04Z');
    const mixed = listed.when(tests[1], live, tests[2]);
    const [after] = mixed.changed();
    expect(mixed.changed()).toHaveLength(1);
    expect(after).toMatchObject({ _pos: mixed.positionOf(live), inventory: { total: 40, sold: 0 }, numLeft: 35, numberSold: 0 });
  });

  it('changes nothing when the same events are applied again', () => {
    spec.when(...events).thenReplayChangesNothing();
  });

  it('keeps every search field equal to what the terms and inventory give, through holds, sales and releases', () => {
    const later = [
      event('UnitsHeld', { dealId: 'spa', holdId: 'h1', quantity: 3, expiresAt: '2026-01-01T00:05:00Z' }),
      event('UnitsHeld', { dealId: 'spa', holdId: 'h2', quantity: 37, expiresAt: '2026-01-01T00:05:00.500Z' }),
      event('UnitsSold', { dealId: 'spa', holdId: 'h1', quantity: 3, expiresAt: '2026-01-01T00:05:00Z' }),
      event('DealRevised', { dealId: 'spa', changes: { title: 'Spa day' }, removed: [] }),
      event('UnitsReleased', { dealId: 'spa', holdId: 'h2', quantity: 37, expiresAt: '2026-01-01T00:05:00.500Z' }),
      event('InventoryStocked', { dealId: 'spa', total: 3 }),
    ];
    let view: DealDetails | undefined;
    const seen: Array<DealDetails['inventory']['held']> = [];
    for (const { event, documents } of spec.given(...events, ...later).states()) {
      view = documents.get('spa');
      expect(view).toEqual({ ...view, ...searchFields(view!.deal, view!.inventory, at(event)) });
      seen.push(view!.inventory.held);
    }
    // Held units by the second their holds expire by (00:05:00 and 00:05:00.5 both by 00:05:01 at the latest).
    expect(seen.slice(events.length - 1)).toEqual([
      {},
      { 1767225900: 3 },
      { 1767225900: 3, 1767225901: 37 },
      { 1767225901: 37 },
      { 1767225901: 37 },
      {},
      {},
    ]);
    expect(view).toMatchObject({ title: 'Spa day', numberSold: 3, numLeft: 0, soldOut: true, inventory: { total: 3, sold: 3, held: {} } });
  });

  it('counts a hold out of num_left once the second it expires in is over, and in the search fields as of the latest event', () => {
    const held = spec
      .when(...events)
      .when(
        event('UnitsHeld', { dealId: 'spa', holdId: 'h1', quantity: 5, expiresAt: '2026-01-01T00:05:00.200Z' }, '2026-01-01T00:00:00.200Z'),
        event('UnitsHeld', { dealId: 'spa', holdId: 'h2', quantity: 1, expiresAt: '2026-01-01T00:09:00Z' }, '2026-01-01T00:04:00Z'),
      );
    const [view] = held.changed();
    const left = (iso: string) => unitsLeftAt(view.inventory, Date.parse(iso));
    expect([
      left('2026-01-01T00:05:00.100Z'),
      left('2026-01-01T00:05:00.200Z'),
      left('2026-01-01T00:05:00.999Z'),
      left('2026-01-01T00:05:01Z'),
      left('2026-01-01T00:09:00Z'),
    ]).toEqual([34, 34, 34, 39, 40]);
    expect(view.numLeft).toBe(34);
    const [later] = held
      .when(event('DealRevised', { dealId: 'spa', changes: { title: 'Spa day' }, removed: [] }, '2026-01-01T00:06:00Z'))
      .changed();
    expect([later.numLeft, later.inventory.held]).toEqual([39, { 1767225901: 5, 1767226140: 1 }]);
  });

  it('takes holds written before expiries were whole seconds out when their sale or release (not naming the expiry) comes', () => {
    const held = spec
      .when(...events)
      .when(
        event('InventoryStocked', { dealId: 'spa', total: 2 }),
        event('UnitsHeld', { dealId: 'spa', holdId: 'old1', quantity: 1, expiresAt: '2026-01-01T00:05:00.123Z' }),
        event('UnitsHeld', { dealId: 'spa', holdId: 'old2', quantity: 1, expiresAt: '2026-01-01T00:05:00.456Z' }),
        event('UnitsSold', { dealId: 'spa', holdId: 'old1', quantity: 1 }),
      );
    const [view] = held.changed();
    expect([view.inventory.held, view.inventory.uneven, view.numLeft, view.soldOut]).toEqual([
      { 1767225901: 1 },
      { old2: ['1767225901', 1] },
      0,
      true,
    ]);
    const [after] = held
      .when(event('UnitsReleased', { dealId: 'spa', holdId: 'old2', quantity: 1 }), event('InventoryStocked', { dealId: 'spa', total: 3 }))
      .changed();
    expect(after.inventory).toEqual({ total: 3, sold: 1, held: {} });
    expect([after.numLeft, after.soldOut]).toEqual([2, false]);
  });

  it('folds a run of events at once exactly as one event at a time', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({
              type: fc.constant('UnitsHeld'),
              hold: fc.nat({ max: 6 }),
              quantity: fc.integer({ min: 1, max: 5 }),
              minutes: fc.nat({ max: 9 }),
            }),
            fc.record({
              type: fc.constantFrom('UnitsSold', 'UnitsReleased'),
              hold: fc.nat({ max: 6 }),
              quantity: fc.integer({ min: 1, max: 5 }),
              minutes: fc.constant(0),
            }),
            fc.record({
              type: fc.constantFrom('InventoryStocked', 'DealRevised'),
              hold: fc.constant(0),
              quantity: fc.integer({ min: 1, max: 90 }),
              minutes: fc.constant(0),
            }),
          ),
          { maxLength: 25 },
        ),
        fc.nat({ max: 24 }),
        (steps, cut) => {
          const later = steps.map(({ type, hold, quantity, minutes }) =>
            type === 'DealRevised'
              ? event(type, { dealId: 'spa', changes: { current_price: quantity }, removed: [] })
              : type === 'InventoryStocked'
                ? event(type, { dealId: 'spa', total: quantity })
                : type === 'UnitsHeld'
                  ? // Odd holds expire off the whole second (written before holds were rounded).
                    event(
                      type,
                      { dealId: 'spa', holdId: `h${hold}`, quantity, expiresAt: `2026-01-01T00:0${minutes}:00${hold % 2 ? '.500' : ''}Z` },
                      `2026-01-01T00:0${hold}:00Z`,
                    )
                  : // Every third hold's sale or release does not name its expiry (as before).
                    event(
                      type,
                      { dealId: 'spa', holdId: `h${hold}`, quantity, ...(hold % 3 ? { expiresAt: `2026-01-01T00:0${minutes}:00Z` } : {}) },
                      `2026-01-01T00:0${hold}:00Z`,
                    ),
          );
          spec
            .when(...events, ...later.slice(0, cut))
            .when(...later.slice(cut))
            .thenRunFoldsAsOneByOne();
        },
      ),
      { numRuns: 300 },
    );
  });
});
