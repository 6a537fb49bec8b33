import type { AccountQueries } from '@deals/accounts';
import type { CatalogQueries, DealDetails } from '@deals/catalog';
import {
  applyEvents,
  handleCommand,
  JobHandler,
  ManualClock,
  OPERATOR,
  PaymentGateway,
  RecordedEvent,
  sandboxOf,
  ScheduledJob,
  Scheduler,
  SequentialIdGenerator,
  TestClockRunner,
  ViewStore,
} from '@deals/kernel';
import { MemoryEventStore } from '@deals/testing';
import type { CouponQr } from '../../coupon-images/coupon-qr';
import { inventoryDecider } from '../../domain/inventory/inventory.decider';
import { inventoryStream } from '../../domain/inventory/inventory.events';
import { dealSnapshot } from '../../domain/purchase/purchase.events';
import { sandboxHoldsProjection } from '../../projections/sandbox-holds/sandbox-holds.projection';
import { OpenHolds } from '../../queries/open-holds';
import { RELEASE_DUE_HOLDS_JOB, ReleaseExpiredHolds } from '../../reactions/release-expired-holds.reaction';
import { ClaimReservation, ClaimReservationHandler } from '../claim-reservation/claim-reservation.command';
import { ReleaseExpiredHold, ReleaseExpiredHoldHandler } from '../release-expired-hold/release-expired-hold.command';
import { ReleaseReservation, ReleaseReservationHandler } from '../release-reservation/release-reservation.command';
import { ReserveUnits, ReserveUnitsHandler } from '../reserve-units/reserve-units.command';
import type { KeyedPurchases } from './keyed-purchases';
import { CouponIssuer } from './coupon-issuer';
import { PurchaseSteps } from './purchase-steps';
import { ResaleSteps } from './resale-steps';

const LIVE = '6f1c2b9e-0d4a-4c1e-9a57-3b8f2e1d7c40';
const SANDBOX = sandboxOf(LIVE);
const LIVE_STREAM = inventoryStream('spa');
const SANDBOX_STREAM = `inventory-spa~${SANDBOX}`;

const deal = {
  id: 'spa',
  title: 'Spa',
  type: 'daily-deal',
  current_price: 1500,
  fulfillment_method: 'printed',
  start_at: '2026-01-01T00:00:00Z',
  end_at: '2027-01-01T00:00:00Z',
};
const view = {
  _id: 'spa',
  deal,
  state: 'in-flight',
  startAt: Date.parse(deal.start_at),
  endAt: Date.parse(deal.end_at),
  inventory: { total: 10, sold: 0, held: {} },
} as unknown as DealDetails;

/** The purchase commands over an event store in memory, with a scheduler that keeps the jobs armed; `charging` runs in each charge. */
function service(charging: () => void = () => undefined) {
  const store = new MemoryEventStore();
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  const jobs = new Map<string, ScheduledJob>();
  const handlers = new Map<string, JobHandler>();
  const scheduler = {
    schedule: async (job: ScheduledJob) => void jobs.set(job.id, job),
    cancel: async (id: string) => void jobs.delete(id),
    handle: (kind: string, handler: JobHandler) => void handlers.set(kind, handler),
  } as unknown as Scheduler;
  const catalog = {
    deal: async (id: string) => (id === 'spa' ? view : null),
    dealsWithOpenHolds: async () => [] as string[],
  } as unknown as CatalogQueries;
  const gateway = {
    charge: async () => {
      charging();
      return { status: 'approved', chargeId: 'ch-1' };
    },
  } as unknown as PaymentGateway;
  const qr = { png: async () => Buffer.alloc(0) } as unknown as CouponQr;
  const coupons = new CouponIssuer(store, clock, qr, catalog, { secret: Buffer.alloc(32, 7) });
  const steps = new PurchaseSteps(store, gateway, coupons, scheduler, clock, new ResaleSteps(store, catalog));
  const accounts = { user: async () => ({}) } as unknown as AccountQueries;
  const reserve = new ReserveUnitsHandler(store, catalog, clock, new SequentialIdGenerator('p'), {} as KeyedPurchases);
  const claim = new ClaimReservationHandler(store, accounts, catalog, steps, clock);
  const release = new ReleaseReservationHandler(store, clock);
  const expire = new ReleaseExpiredHoldHandler(store, clock);
  // The sandbox holds view, folded from the whole log.
  const views = {
    find: async () => {
      const log = await store.readAll({ after: null, maxCount: Number.MAX_SAFE_INTEGER });
      return applyEvents(sandboxHoldsProjection, new Map(), log).filter((doc) => doc.held > 0);
    },
  } as unknown as ViewStore;
  const runner = { sweepAtEachAdvance: () => undefined } as unknown as TestClockRunner;
  const releases = new ReleaseExpiredHolds(scheduler, expire, new OpenHolds(store, catalog, views), clock, runner);
  const types = async (stream: string) => (await store.readStream(stream)).map((e: RecordedEvent) => e.type);
  return { store, clock, jobs, handlers, steps, reserve, claim, release, expire, releases, types };
}

const caller = (partnerId: string) => ({ actor: 'partner', partnerId });

describe("a sandbox's purchases take units of its own inventory of the deal", () => {
  let s: ReturnType<typeof service>;
  beforeEach(async () => {
    s = service();
    await handleCommand(
      s.store,
      LIVE_STREAM,
      inventoryDecider,
      { type: 'StockUnits', data: { dealId: 'spa', total: 10 } },
      { now: s.clock.now(), metadata: OPERATOR },
    );
  });

  it("reserves on its copy, stocked with the live deal's total by its first hold, and claims there; the live inventory is untouched", async () => {
    const { purchaseId } = await s.reserve.execute(new ReserveUnits('spa', 3, caller(SANDBOX)));
    expect(await s.store.readStream(SANDBOX_STREAM)).toEqual([
      expect.objectContaining({ type: 'InventoryStocked', data: { dealId: 'spa', total: 10, sandbox: SANDBOX } }),
      expect.objectContaining({ type: 'UnitsHeld', data: expect.objectContaining({ holdId: purchaseId, quantity: 3, sandbox: SANDBOX }) }),
    ]);
    // No job of its own: the sweep finds the hold in the sandbox's inventory at its expiry.
    expect([...s.jobs.values()]).toEqual([]);

    await s.claim.execute(new ClaimReservation(purchaseId, 'u-1', caller(SANDBOX)));
    expect(await s.types(SANDBOX_STREAM)).toEqual(['InventoryStocked', 'UnitsHeld', 'UnitsSold']);
    expect((await s.store.readStream(SANDBOX_STREAM))[2].data).toMatchObject({ sandbox: SANDBOX, buyer: `${SANDBOX}/u-1` });
    expect(await s.types(LIVE_STREAM)).toEqual(['InventoryStocked']);
  });

  it('claims a lapsed reservation on fresh units of its copy, held and sold with the claim in one append', async () => {
    const { purchaseId } = await s.reserve.execute(new ReserveUnits('spa', 2, caller(SANDBOX)));
    s.clock.advance(5 * 60_000 + 1000);
    const appends = jest.spyOn(s.store, 'appendToStreams');
    await s.claim.execute(new ClaimReservation(purchaseId, 'u-1', caller(SANDBOX)));
    expect(appends.mock.calls.map(([batch]) => batch.map((a) => a.streamId))).toEqual([
      [SANDBOX_STREAM, `purchase-${purchaseId}`, `coupon-${purchaseId}-1`, `coupon-${purchaseId}-2`],
    ]);
    const fresh = (await s.store.readStream(SANDBOX_STREAM)).slice(2);
    expect(fresh.map((e) => [e.type, (e.data as { holdId: string; sandbox?: string }).holdId])).toEqual([
      ['UnitsHeld', `${purchaseId}-r`],
      ['UnitsSold', `${purchaseId}-r`],
    ]);
    expect(fresh.every((e) => (e.data as { sandbox?: string }).sandbox === SANDBOX)).toBe(true);
    expect(await s.types(LIVE_STREAM)).toEqual(['InventoryStocked']);
  });

  it('sells a card purchase from its copy, and may take all ten units however many the live deal has sold', async () => {
    await s.reserve.execute(new ReserveUnits('spa', 8, caller(LIVE)));
    const answer = await s.steps.run(
      {
        type: 'StoredCardPurchaseStarted',
        data: {
          partnerId: SANDBOX,
          purchaseId: 'card-1',
          userId: 'u-1',
          creditCardId: 'c-1',
          cardToken: 'tok',
          sessionId: null,
          deal: dealSnapshot(deal),
          quantity: 10,
          maxPerUser: undefined,
          shipping: null,
          keyed: null,
        },
      },
      caller(SANDBOX),
    );
    expect(answer).toMatchObject({ outcome: 'sold', purchaseId: 'card-1' });
    expect(await s.types(SANDBOX_STREAM)).toEqual(['InventoryStocked', 'UnitsHeld', 'UnitsSold']);
    expect(await s.types(LIVE_STREAM)).toEqual(['InventoryStocked', 'UnitsHeld']);
  });

  it('sells a card purchase whose hold lapsed during its charge on fresh units of its copy: one append with its record, coupons and lock', async () => {
    let appends: string[][] | null = null;
    s = service(() => {
      s.clock.advance(5 * 60_000 + 1000);
      appends = [];
    });
    const across = s.store.appendToStreams.bind(s.store);
    s.store.appendToStreams = (batch) => {
      appends?.push(batch.map((a) => a.streamId));
      return across(batch);
    };
    await handleCommand(
      s.store,
      LIVE_STREAM,
      inventoryDecider,
      { type: 'StockUnits', data: { dealId: 'spa', total: 10 } },
      { now: s.clock.now(), metadata: OPERATOR },
    );
    const started = {
      partnerId: SANDBOX,
      purchaseId: 'card-2',
      userId: 'u-2',
      creditCardId: 'c-2',
      cardToken: 'tok',
      sessionId: null,
      deal: dealSnapshot(deal),
      quantity: 2,
      maxPerUser: 2,
      shipping: null,
      keyed: null,
    };
    const answer = await s.steps.run({ type: 'StoredCardPurchaseStarted', data: started }, caller(SANDBOX));
    expect(answer).toMatchObject({ outcome: 'sold', purchaseId: 'card-2' });
    expect(appends).toEqual([[SANDBOX_STREAM, 'purchase-card-2', 'coupon-card-2-1', 'coupon-card-2-2', 'usercharge-u-2']]);
    const sales = (await s.store.readStream(SANDBOX_STREAM)).filter((e) => e.type === 'UnitsSold').map((e) => e.data);
    expect(sales).toEqual([expect.objectContaining({ holdId: 'card-2-r', quantity: 2, buyer: `${SANDBOX}/u-2` })]);
  });

  it('releases a reservation on its copy, by the partner or by the sweep at its expiry', async () => {
    const first = await s.reserve.execute(new ReserveUnits('spa', 2, caller(SANDBOX)));
    await s.release.execute(new ReleaseReservation(first.purchaseId, caller(SANDBOX)));
    expect((await s.store.readStream(SANDBOX_STREAM)).at(-1)).toMatchObject({
      type: 'UnitsReleased',
      data: { holdId: first.purchaseId, reason: 'released', sandbox: SANDBOX },
    });

    const second = await s.reserve.execute(new ReserveUnits('spa', 2, caller(SANDBOX)));
    expect(s.jobs.size).toBe(0);
    await s.releases.rearm();
    const [job] = [...s.jobs.values()];
    expect(job).toMatchObject({ id: RELEASE_DUE_HOLDS_JOB, runAt: s.clock.now() });
    // Before the expiry, the sweep arms itself for it.
    await s.handlers.get(RELEASE_DUE_HOLDS_JOB)!(job);
    expect(s.jobs.get(RELEASE_DUE_HOLDS_JOB)!.runAt).toEqual(new Date('2026-06-15T12:05:00.000Z'));
    s.clock.advance(6 * 60_000);
    await s.handlers.get(RELEASE_DUE_HOLDS_JOB)!(job);
    expect((await s.store.readStream(SANDBOX_STREAM)).at(-1)).toMatchObject({
      type: 'UnitsReleased',
      data: { holdId: second.purchaseId, reason: 'expired', sandbox: SANDBOX },
    });
    expect(await s.types(LIVE_STREAM)).toEqual(['InventoryStocked']);
  });

  it("leaves a live partner as it was: the deal's own stream, unmarked events, no job armed", async () => {
    const { purchaseId } = await s.reserve.execute(new ReserveUnits('spa', 3, caller(LIVE)));
    expect((await s.store.readStream(LIVE_STREAM))[1].data).toEqual({
      dealId: 'spa',
      holdId: purchaseId,
      quantity: 3,
      expiresAt: '2026-06-15T12:05:00.000Z',
    });
    expect([...s.jobs.values()]).toEqual([]);
    // A release naming no partner is of the live inventory.
    s.clock.advance(6 * 60_000);
    await s.expire.execute(new ReleaseExpiredHold('spa', purchaseId));
    expect(await s.types(LIVE_STREAM)).toEqual(['InventoryStocked', 'UnitsHeld', 'UnitsReleased']);
    expect(await s.store.readStream(SANDBOX_STREAM)).toEqual([]);
  });
});
