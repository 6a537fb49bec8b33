import { ManualClock } from '@deals/kernel';
import { ReleaseExpiredHold } from '@deals/purchasing/commands/release-expired-hold/release-expired-hold.command';
import { CommandBus } from '@nestjs/cqrs';
import { TestApi } from '../../support/api-harness';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { TEST_CARDS } from '../../support/test-cards';

/**
 * GET /v1/events (issue 37): every event of a partner's resources, in log order, with the resource
 * as it was then, paged by cursor; one partner never sees another's.
 */
describe('the partner event feed: GET /v1/events', () => {
  const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let apiKey: string;
  let basic: { username: string; password: string };
  let otherKey: string;

  beforeAll(async () => {
    api = await TestApi.start({ clock });
    const partner = await api.createPartner();
    apiKey = partner.apiKey;
    basic = { username: partner.username, password: partner.password };
    otherKey = (await api.createPartner('Other')).apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, max_per_user: undefined }, cardLinked]);
  });
  afterAll(() => api.close());

  const call = (method: string, path: string, body?: unknown, key = apiKey) => api.call(method, path, { apiKey: key, body });
  const events = async (query = '', key = apiKey) => {
    const reply = await call('GET', `/v1/events${query}`, undefined, key);
    expect(reply.status).toBe(200);
    return reply.body;
  };

  it('tells what happened to users, purchases, coupons, reservations, card links and subscriptions, each resource in its own shape', async () => {
    const userId = (await call('POST', '/users', { email: 'ada@example.com', first_name: 'Ada' })).body.user_id;
    await call('PUT', `/users/${userId}`, { last_name: 'Lovelace' });
    const cardId = (
      await call('POST', '/credit_cards', {
        user_id: userId,
        number: TEST_CARDS.visa,
        verification_value: '123',
        month: 12,
        year: 2030,
        zip_code: '60601',
      })
    ).body.credit_card_id;
    const bought = await call('POST', '/purchases', {
      deal_id: spaDay.id,
      quantity: 2,
      user_id: userId,
      credit_card_id: cardId,
      expected_price_per_unit: spaDay.current_price,
    });
    expect(bought.status).toBe(200);
    const purchase = bought.body.purchase;
    await call('PUT', `/coupons/${purchase.coupons[0].id}/redeem`);
    const reserved = (await call('POST', '/purchases/reserve', { deal_id: spaDay.id, num_bought: 1 })).body.purchase;
    await call('PUT', `/purchases/${reserved.id}/release`);
    const resale = await api.call('POST', '/api/v3/resellers/purchases', {
      basic,
      body: {
        deal_id: spaDay.id,
        quantity: 1,
        transaction_reference: 'r-1',
        transaction_date: '2026-06-15T11:00:00Z',
        transaction_amount: 4900,
        first_name: 'Bo',
        last_name: 'Lee',
      },
    });
    expect(resale.status).toBe(200);
    expect((await api.call('DELETE', `/api/v3/coupons/${resale.body.coupons[0].id}/cancel`, { basic })).status).toBe(200);
    const link = (await call('POST', '/card_links', { user_id: userId, deal_id: cardLinked.id })).body.card_link;
    await call('PUT', `/card_links/${link.id}/unlink`);
    await call('PUT', `/card_links/${link.id}/link`);
    const redeemed = await call('PUT', `/card_links/${link.id}/redeem`, {
      transaction_amount: 2500,
      transaction_date: '2026-06-15T12:00:00',
      transaction_reference: 't-1',
      max_redemption: true,
    });
    expect(redeemed.status).toBe(200);
    const subscription = (await call('POST', `/users/${userId}/subscriptions`, { zip: 60601 })).body.subscription;
    await call('PUT', `/subscriptions/${subscription.id}`, { status: 'inactive' });

    // The feed is read by cursor: answers do not wait for it (docs/webhooks.md).
    await api.settle();
    const feed = (await events('?per_page=1000')).events;
    expect(feed.map((e: any) => [e.type, e.sequence])).toEqual([
      ['user.created', 1],
      ['user.updated', 2],
      ['purchase.completed', 1],
      ['coupon.redeemed', 1],
      ['reservation.released', 1],
      ['purchase.completed', 1],
      ['coupon.cancelled', 1],
      ['purchase.refunded', 2],
      ['card_link.linked', 1],
      ['card_link.unlinked', 2],
      ['card_link.linked', 3],
      ['card_link.redeemed', 4],
      ['card_link.fulfilled', 5],
      ['subscription.updated', 1],
    ]);
    const byType = (type: string) => feed.filter((e: any) => e.type === type);
    // Each resource in its own shape, as its own calls answer it.
    const completed = byType('purchase.completed')[0];
    expect(completed.resource).toBe('purchase');
    expect(completed.resource_id).toBe(purchase.id);
    expect(completed.data).toEqual({ ...purchase, coupons: purchase.coupons.map((c: any) => ({ ...c })) });
    expect(completed.created_at).toBe('2026-06-15T12:00:00.000Z');
    expect(byType('user.updated')[0].data).toMatchObject({ id: userId, firstname: 'Ada', lastname: 'Lovelace' });
    expect(byType('coupon.redeemed')[0].data).toMatchObject({ id: purchase.coupons[0].id, state: 'redeemed' });
    expect(byType('reservation.released')[0].data).toMatchObject({ id: reserved.id, fulfillment_state: 'released' });
    expect(byType('purchase.refunded')[0]).toMatchObject({ coupon_id: resale.body.coupons[0].id });
    expect(byType('purchase.refunded')[0].data.coupons[0].state).toBe('cancelled');
    expect(byType('card_link.redeemed')[0].redemption).toEqual({
      transaction_reference: 't-1',
      transaction_amount: 2500,
      transaction_date: '2026-06-15T12:00:00',
      max_redemption: true,
      qualifies: true,
      incentive_amount: expect.any(Number),
      fee_amount: expect.any(Number),
    });
    expect(byType('card_link.fulfilled')[0].data).toEqual({ ...link, state: 'fulfilled' });
    expect(byType('subscription.updated')[0].data).toMatchObject({ id: subscription.id, status: 'inactive' });
    // One event, alone.
    expect((await call('GET', `/v1/events/${completed.id}`)).body).toEqual({ status: 'success', event: completed });

    // Paged by cursor: the pages together are the whole feed.
    const pages: any[] = [];
    let after = '';
    for (;;) {
      const page = await events(`?per_page=5${after ? `&after=${after}` : ''}`);
      pages.push(...page.events);
      if (!page.has_more) break;
      after = page.next_cursor;
    }
    expect(pages).toEqual(feed);
    // Filtered by type and by resource.
    expect((await events('?types=card_link.linked,coupon.redeemed')).events.map((e: any) => e.type)).toEqual([
      'coupon.redeemed',
      'card_link.linked',
      'card_link.linked',
    ]);
    expect((await events(`?resource_id=${link.id}`)).events).toHaveLength(5);
    // Polling from the last event answers nothing new, and keeps the cursor.
    const last = feed[feed.length - 1].id;
    expect(await events(`?after=${last}`)).toEqual({ status: 'success', events: [], has_more: false, next_cursor: last });
  });

  it('shows a partner its own events only, and refuses an unknown cursor or type', async () => {
    await call('POST', '/users', { email: 'other@example.com' }, otherKey);
    await api.settle();
    const mine = (await events('?per_page=1000')).events;
    const theirs = (await events('', otherKey)).events;
    expect(theirs.map((e: any) => e.type)).toEqual(['user.created']);
    expect((await call('GET', `/v1/events/${theirs[0].id}`)).status).toBe(404);
    expect(mine.some((e: any) => e.id === theirs[0].id)).toBe(false);
    const refused = await call('GET', `/v1/events?after=${theirs[0].id}&types=purchase.done`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: any) => e.field).sort()).toEqual(['types']);
    const cursor = await call('GET', `/v1/events?after=${theirs[0].id}`);
    expect(cursor.status).toBe(422);
    expect(cursor.body.errors).toEqual([{ type: 'invalid', resource: 'event', field: 'after', message: 'names no event of this partner' }]);
  });

  it('makes a reservation whose hold lapsed into an event', async () => {
    const reserved = (await call('POST', '/purchases/reserve', { deal_id: spaDay.id, num_bought: 1 })).body.purchase;
    clock.set('2026-06-15T12:06:00Z');
    // What the hold's job does at its time (its timer here counts real time, not the test's clock).
    await api.get(CommandBus).execute(new ReleaseExpiredHold(spaDay.id, reserved.id));
    await api.settle();
    const lapsed = (await events('?types=reservation.expired')).events;
    // The purchase as it was then: its hold lapsed, released with its payment pending.
    expect(lapsed.map((e: any) => [e.resource_id, e.data.payment_state, e.data.fulfillment_state])).toEqual([
      [reserved.id, 'pending', 'released'],
    ]);
  });
});
