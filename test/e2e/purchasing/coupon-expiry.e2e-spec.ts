import { EventStore, ManualClock, RecordedEvent, ViewStore } from '@deals/kernel';
import { ExpireCoupons } from '@deals/purchasing';
import { couponsDueForExpiry, ExpiryCursor } from '@deals/purchasing/queries/coupons-due-for-expiry';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { eventually } from '../../support/eventually';

describe('the recorded coupon expiry: the expire-coupons sweep (issue 37)', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let partnerId: string;
  beforeAll(async () => {
    // The sweep every 200 ms instead of 10 minutes: its timer counts real time, its sweeps read the test's clock.
    api = await TestApi.start({ clock, env: { COUPON_EXPIRY_SWEEP_MS: '200' } });
    const partner = await api.createPartner();
    apiKey = partner.apiKey;
    partnerId = partner.partnerId;
    await api.importRegions([chicago]);
    await api.importDeals([
      { ...spaDay, id: 'short-lived', quantity: 10, max_per_user: undefined, expires_at: '2026-06-15T12:02:00Z' },
      { ...spaDay, id: 'long-lived', quantity: 10, max_per_user: undefined },
      { ...spaDay, id: 'mid-lived', quantity: 10, max_per_user: undefined, expires_at: '2026-09-30T00:00:00Z' },
    ]);
  });
  afterAll(() => api.close());

  const buy = async (dealId: string, quantity: number, userId: string): Promise<string[]> => {
    const id = (await api.call('POST', '/purchases/reserve', { apiKey, body: { deal_id: dealId, num_bought: quantity } })).body.purchase.id;
    const claimed = await api.call('PUT', `/purchases/${id}/claim`, { apiKey, body: { user_id: userId } });
    expect(claimed.status).toBe(200);
    return claimed.body.purchase.coupons.map((c: { id: string }) => c.id);
  };
  const stream = (couponId: string): Promise<RecordedEvent[]> => api.get(EventStore).readStream(`coupon-${couponId}`);
  const types = async (couponId: string) => (await stream(couponId)).map((e) => e.type);

  it('records the expiry once, at its instant, for coupons neither redeemed nor cancelled; a second sweep adds nothing', async () => {
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'expiring@example.com' } })).body.user_id;
    const [due, redeemed] = await buy('short-lived', 2, userId);
    const [lasting] = await buy('long-lived', 1, userId);
    expect((await api.call('PUT', `/coupons/${redeemed}/redeem`, { apiKey })).status).toBe(200);
    const list = async () => (await api.call('GET', `/users/${userId}/coupons`, { apiKey })).body;

    clock.set('2026-06-15T12:05:00Z');
    // Expired by the clock already (the sweep, every 200 ms, has most likely not run yet).
    const byClock = await list();
    // The sweep records it.
    const dueTypes = () => types(due);
    expect(await eventually(dueTypes, (recorded) => recorded.includes('CouponExpired'))).toContain('CouponExpired');

    const expired = (await stream(due)).filter((e) => e.type === 'CouponExpired');
    expect(expired).toHaveLength(1);
    expect(expired[0].data).toEqual({ couponId: due, expiredAt: '2026-06-15T12:02:00.000Z' });
    expect(expired[0].metadata).toMatchObject({ actor: 'system', partnerId, occurredAt: '2026-06-15T12:05:00.000Z' });
    expect(await types(redeemed)).toEqual(['CouponIssued', 'CouponRedeemed']);
    expect(await types(lasting)).toEqual(['CouponIssued']);

    // The view has it; the sweep finds nothing left to record, and records nothing.
    await api.settle();
    expect(await api.get(ExpireCoupons).sweep()).toEqual({ found: 0, recorded: 0, failed: 0 });
    expect(await types(due)).toEqual(['CouponIssued', 'CouponExpired']);

    // A partner sees what the clock showed before the record.
    const recorded = await list();
    expect(recorded).toEqual(byClock);
    expect(recorded.coupons.map((c: { id: string; state: string }) => [c.id, c.state]).sort()).toEqual(
      [
        [due, 'expired'],
        [redeemed, 'redeemed'],
        [lasting, 'valid'],
      ].sort(),
    );
  }, 60_000);

  it('finds the coupons due oldest expiry first, then by id, page after page', async () => {
    const userId = (await api.call('POST', '/users', { apiKey, body: { email: 'paged@example.com' } })).body.user_id;
    const long = [...(await buy('long-lived', 2, userId)), ...(await buy('long-lived', 1, userId))];
    const [mid] = await buy('mid-lived', 1, userId);
    await api.settle();
    // As a sweep at the new year would page (the job's sweeps read the test clock, months before).
    const seen: string[] = [];
    for (let after: ExpiryCursor | null = null; ;) {
      const page = await couponsDueForExpiry(api.get(ViewStore), Date.parse('2027-01-01T00:00:00Z'), after, 1);
      if (page.length === 0) break;
      seen.push(page[0]._id);
      after = { expiresAt: page[0].expiresAt as number, id: page[0]._id };
    }
    const mine = seen.filter((id) => [mid, ...long].includes(id));
    expect(mine).toEqual([mid, ...[...long].sort()]);
  });
});
