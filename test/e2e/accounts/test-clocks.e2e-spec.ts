import { CreatedPartner } from '@deals/accounts';
import { IdempotencyStore, ManualClock, OPERATOR, sandboxOf, underTestClock } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { CommandBus } from '@nestjs/cqrs';
import { SiteClient } from '../../support/site-client';
import { TestApi } from '../../support/api-harness';
import { chicago, spaDay } from '../../support/catalogue-fixtures';
import { SmtpSink } from '../../support/smtp-sink';
import { CLOCK_DIGEST_DAYS } from '@deals/messaging/reactions/daily-digest.reaction';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { eventually } from '../../support/eventually';
import { polled } from '../../support/polled';
import { WebhookSender } from '@deals/event-feed';
import { MAX_TEST_CLOCKS } from '@deals/accounts/domain/test-clock/test-clock-places';

/** How long a wait may take before it counts as hung (under the test's own timeout). */
const HUNG_MS = 20_000;

/**
 * A sandbox's test clocks over HTTPS: calls made under one act in its time on a world of its own;
 * advancing it runs what time brings (a reservation lapsing, a batch sent to a real SMTP server, a
 * statement's day closing), in order, and nothing moves while it stands still.
 */
describe('test clocks', () => {
  const real = new ManualClock(new Date('2026-06-15T12:00:00Z'));
  let api: TestApi;
  let smtp: SmtpSink;
  let receiver: WebhookReceiver;
  let partner: CreatedPartner;
  let test: string;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    receiver = await WebhookReceiver.start();
    api = await TestApi.start({ clock: real, env: { SMTP_URL: smtp.url, WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'on' } });
    (api.get(WebhookSender) as unknown as { agent: { options: { ca?: string } } }).agent.options.ca = receiver.ca;
    partner = await api.createPartner('Time traveller');
    test = partner.sandbox!.apiKey;
    await api.importRegions([chicago]);
    await api.importDeals([{ ...spaDay, current_price: 1000, quantity: 10, max_per_user: undefined, end_at: '2027-06-18T05:00:00Z' }]);
  });
  afterAll(async () => {
    await api.close();
    await smtp.close();
    await receiver.close();
  });

  const makeClock = async (frozen: string) => {
    const made = await api.call('POST', '/v1/test_clocks', { apiKey: test, body: { frozen_time: frozen, name: 'lapse' } });
    expect(made.status).toBe(200);
    return made.body.test_clock as { id: string; frozen_time: string; status: string };
  };
  const under = (clockId: string, method: string, path: string, body?: unknown) =>
    api.call(method, path, { apiKey: test, body, headers: { 'deals-test-clock': clockId } });
  const advance = async (clockId: string, to: string) => {
    const reply = await api.call('POST', `/v1/test_clocks/${clockId}/advance`, { apiKey: test, body: { frozen_time: to } });
    expect(reply.status).toBe(200);
    const clock = await polled(
      async () => (await api.call('GET', `/v1/test_clocks/${clockId}`, { apiKey: test })).body.test_clock,
      (read) => read.status === 'ready',
    );
    if (clock.status !== 'ready') throw new Error(`test clock ${clockId} still advancing`);
    return clock;
  };

  it('is a sandbox’s: live credentials can neither make one nor call under one; another sandbox finds none', async () => {
    const clock = await makeClock('2026-07-01T00:00:00Z');
    expect(clock).toMatchObject({ frozen_time: '2026-07-01T00:00:00.000Z', status: 'ready', livemode: false });
    const live = await api.call('POST', '/v1/test_clocks', { apiKey: partner.apiKey, body: { frozen_time: '2026-07-01T00:00:00Z' } });
    expect([live.status, live.body.error_type]).toEqual([403, 'forbidden']);
    const liveUnder = await api.call('GET', `/deals/${spaDay.id}`, { apiKey: partner.apiKey, headers: { 'deals-test-clock': clock.id } });
    expect(liveUnder.status).toBe(403);
    const other = await api.createPartner('Someone else');
    expect((await api.call('GET', `/v1/test_clocks/${clock.id}`, { apiKey: other.sandbox!.apiKey })).status).toBe(404);
    const otherUnder = await api.call('GET', `/deals/${spaDay.id}`, {
      apiKey: other.sandbox!.apiKey,
      headers: { 'deals-test-clock': clock.id },
    });
    expect(otherUnder.status).toBe(404);
    expect((await api.call('GET', '/v1/test_clocks', { apiKey: partner.apiKey })).status).toBe(403);
    expect((await api.call('GET', `/v1/test_clocks/${clock.id}`, { apiKey: partner.apiKey })).status).toBe(403);
    // What belongs to the sandbox itself is not made under a clock: clocks, webhook endpoints, users' access tokens.
    expect((await under(clock.id, 'POST', '/v1/test_clocks', { frozen_time: '2026-08-01T00:00:00Z' })).status).toBe(403);
    expect((await under(clock.id, 'GET', '/v1/webhook_endpoints')).status).toBe(403);
    const user = (await under(clock.id, 'POST', '/users', { email: 'token@example.com' })).body.user_id;
    const token = await under(clock.id, 'POST', `/users/${user}/access_tokens`, { expires_in: 60, scope: 'all', access: 'read' });
    expect([token.status, token.body.error_type]).toEqual([403, 'forbidden']);
    const past = await api.call('POST', `/v1/test_clocks/${clock.id}/advance`, {
      apiKey: test,
      body: { frozen_time: '2026-06-01T00:00:00Z' },
    });
    expect([past.status, past.body.error_type]).toEqual([422, 'validation_failed']);
    // A day the calendar lacks is refused, never rolled over into the next month.
    for (const [path, frozen_time] of [
      ['/v1/test_clocks', '2027-02-30T00:00:00Z'],
      [`/v1/test_clocks/${clock.id}/advance`, '2027-02-30T00:00:00Z'],
      ['/v1/test_clocks', '2027-04-31T12:00:00+02:00'],
    ]) {
      const reply = await api.call('POST', path, { apiKey: test, body: { frozen_time } });
      expect([path, reply.status, reply.body.errors]).toEqual([
        path,
        422,
        [
          {
            type: 'invalid',
            resource: 'test_clock',
            field: 'frozen_time',
            message: 'must be a date and time in ISO 8601 with a zone (2026-06-15T12:00:00Z)',
          },
        ],
      ]);
    }
  });

  it(`is deleted by its sandbox (gone for every call after), and a sandbox has at most ${MAX_TEST_CLOCKS}: deleting one frees its place`, async () => {
    const other = await api.createPartner('Many clocks');
    const key = other.sandbox!.apiKey;
    const make = (n: number) =>
      api.call('POST', '/v1/test_clocks', { apiKey: key, body: { frozen_time: '2027-01-01T00:00:00Z', name: `c${n}` } });
    const made: string[] = [];
    for (let n = 0; n < MAX_TEST_CLOCKS; n++) {
      const reply = await make(n);
      expect(reply.status).toBe(200);
      made.push(reply.body.test_clock.id);
    }
    const refused = await make(MAX_TEST_CLOCKS);
    expect([refused.status, refused.body.error_type]).toEqual([422, 'validation_failed']);
    expect(JSON.stringify(refused.body)).toContain(`at most ${MAX_TEST_CLOCKS} test clocks`);

    const [gone] = made;
    const user = await api.call('POST', '/users', {
      apiKey: key,
      body: { email: 'gone@example.com' },
      headers: { 'deals-test-clock': gone, 'idempotency-key': 'made-under-gone' },
    });
    expect(user.status).toBe(200);
    const world = underTestClock(sandboxOf(other.partnerId), gone);
    expect(api.get(IdempotencyStore).keptBytes().get(world)).toBeGreaterThan(0);
    // Not under a clock: a clock is the sandbox's own.
    const underIt = await api.call('DELETE', `/v1/test_clocks/${gone}`, { apiKey: key, headers: { 'deals-test-clock': gone } });
    expect(underIt.status).toBe(403);
    const deleted = await api.call('DELETE', `/v1/test_clocks/${gone}`, { apiKey: key });
    expect([deleted.status, deleted.body.test_clock.id, deleted.body.test_clock.deleted]).toEqual([200, gone, true]);
    expect((await api.call('GET', `/v1/test_clocks/${gone}`, { apiKey: key })).status).toBe(404);
    // Its world's idempotency keys are forgotten with it.
    expect(api.get(IdempotencyStore).keptBytes().get(world) ?? 0).toBe(0);
    expect((await api.call('DELETE', `/v1/test_clocks/${gone}`, { apiKey: key })).status).toBe(404);
    const advanced = await api.call('POST', `/v1/test_clocks/${gone}/advance`, {
      apiKey: key,
      body: { frozen_time: '2027-01-02T00:00:00Z' },
    });
    expect(advanced.status).toBe(404);
    const underGone = await api.call('GET', `/users/${user.body.user_id}`, { apiKey: key, headers: { 'deals-test-clock': gone } });
    expect(underGone.status).toBe(404);
    const listed = (await api.call('GET', '/v1/test_clocks', { apiKey: key })).body.test_clocks.map((c: { id: string }) => c.id);
    expect([listed.length, listed.includes(gone)]).toEqual([MAX_TEST_CLOCKS - 1, false]);
    expect((await make(MAX_TEST_CLOCKS)).status).toBe(200);
    // Another sandbox deletes none of them; live credentials none either.
    expect((await api.call('DELETE', `/v1/test_clocks/${made[1]}`, { apiKey: test })).status).toBe(404);
    expect((await api.call('DELETE', `/v1/test_clocks/${made[1]}`, { apiKey: other.apiKey })).status).toBe(403);
  });

  it('lapses a reservation made under it only when advanced past its five minutes, whatever real time does', async () => {
    const clock = await makeClock('2026-12-10T09:00:00Z');
    const reserved = await under(clock.id, 'POST', '/purchases/reserve', { deal_id: spaDay.id, num_bought: 2 });
    expect(reserved.status).toBe(200);
    const purchaseId = reserved.body.purchase.id;
    // Real time passes an hour: the clock stands still, and the hold with it.
    real.advance(3_600_000);
    await api.settle();
    const held = await under(clock.id, 'GET', `/purchases/${purchaseId}`);
    expect(held.body.purchase.fulfillment_state).toBe('reserved');
    // The sandbox without the clock, and live, find nothing of the clock's world.
    expect((await api.call('GET', `/purchases/${purchaseId}`, { apiKey: test })).status).toBe(404);
    expect((await api.call('GET', `/purchases/${purchaseId}`, { apiKey: partner.apiKey })).status).toBe(404);

    const ready = await advance(clock.id, '2026-12-10T09:06:00Z');
    expect(ready.frozen_time).toBe('2026-12-10T09:06:00.000Z');
    await api.settle();
    // It lapsed at its own instant, five minutes after it was made, by the clock.
    const events = (await under(clock.id, 'GET', `/v1/events?resource_id=${purchaseId}`)).body.events;
    expect(events.map((e: { type: string; created_at: string; livemode: boolean }) => [e.type, e.created_at, e.livemode])).toEqual(
      expect.arrayContaining([['reservation.expired', '2026-12-10T09:05:00.000Z', false]]),
    );
    const lapsed = (await under(clock.id, 'GET', `/purchases/${purchaseId}`)).body.purchase;
    expect([lapsed.payment_state, lapsed.fulfillment_state]).toEqual(['pending', 'released']);
  });

  it("delivers its events to the sandbox's webhook endpoints, dated in its time; keeps its idempotency keys by its time; expires coupons", async () => {
    const endpoint = await api.call('POST', '/v1/webhook_endpoints', {
      apiKey: test,
      body: { url: receiver.url('/clocked'), types: ['user.created', 'coupon.expired'] },
    });
    expect(endpoint.status).toBe(201);
    const clock = await makeClock('2026-12-31T23:00:00Z');
    const keyed = (email: string) =>
      api.call('POST', '/users', {
        apiKey: test,
        body: { email },
        headers: { 'deals-test-clock': clock.id, 'idempotency-key': 'make-once' },
      });
    const first = await keyed('keyed@example.com');
    expect(first.status).toBe(200);
    expect((await keyed('keyed@example.com')).headers['idempotent-replayed']).toBe('true');
    const delivered = await receiver.waitFor(1, (r) => r.path === '/clocked', HUNG_MS);
    const body = JSON.parse(delivered[0].body);
    expect([body.type, body.created_at, body.livemode, body.resource_id]).toEqual([
      'user.created',
      '2026-12-31T23:00:00.000Z',
      false,
      first.body.user_id,
    ]);
    // A coupon bought under the clock an hour before the deal's coupons expire (2026-12-31T23:59Z).
    const card = await under(clock.id, 'POST', '/credit_cards', {
      user_id: first.body.user_id,
      number: '4242424242424242',
      verification_value: '123',
      month: 12,
      year: 2030,
      zip_code: '60601',
    });
    const bought = await under(clock.id, 'POST', '/purchases', {
      deal_id: spaDay.id,
      user_id: first.body.user_id,
      credit_card_id: card.body.credit_card_id,
      quantity: 1,
      expected_price_per_unit: 1000,
    });
    expect(bought.status).toBe(200);
    const couponId = bought.body.purchase.coupons[0].id;
    // A day on, by the clock: the coupon expired (its event delivered), and the key is forgotten, so the same request runs again.
    await advance(clock.id, '2027-01-02T00:00:00Z');
    const coupons = (await under(clock.id, 'GET', `/users/${first.body.user_id}/coupons`)).body.coupons;
    expect(coupons.map((c: { id: string; state: string }) => [c.id, c.state])).toEqual([[couponId, 'expired']]);
    const expired = await receiver.waitFor(1, (r) => r.path === '/clocked' && r.body.includes('"coupon.expired"'), HUNG_MS);
    expect(JSON.parse(expired[0].body)).toMatchObject({ resource_id: couponId, livemode: false, created_at: '2026-12-31T23:59:00.000Z' });
    const again = await keyed('keyed@example.com');
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });

  it("keeps its idempotency keys by its time alone: real time's purge leaves a clock standing in the past alone, its own advance purges them", async () => {
    const clock = await makeClock('2026-01-10T08:00:00Z');
    const keyed = () =>
      api.call('POST', '/users', {
        apiKey: test,
        body: { email: 'past@example.com' },
        headers: { 'deals-test-clock': clock.id, 'idempotency-key': 'in-the-past' },
      });
    expect((await keyed()).status).toBe(200);
    const store = api.get(IdempotencyStore);
    const world = underTestClock(sandboxOf(partner.partnerId), clock.id);
    const kept = store.keptBytes().get(world);
    expect(kept).toBeGreaterThan(0);
    // By real time (five months on) the key expired long ago; by the clock it is a minute old.
    await store.purge(real.now().getTime());
    expect((await keyed()).headers['idempotent-replayed']).toBe('true');
    expect(store.keptBytes().get(world)).toBe(kept);
    await advance(clock.id, '2026-01-11T09:00:00Z');
    expect(store.keptBytes().get(world) ?? 0).toBe(0);
    expect((await keyed()).headers['idempotent-replayed']).toBeUndefined();
  });

  it('retries a failed delivery of its events by its time: the retry waits for an advance past it, then goes, signed in real time', async () => {
    const endpoint = await api.call('POST', '/v1/webhook_endpoints', {
      apiKey: test,
      body: { url: receiver.url('/retried'), types: ['user.created'] },
    });
    expect(endpoint.status).toBe(201);
    let failures = 1;
    receiver.answerBy((r) => ({ status: r.path === '/retried' && failures-- > 0 ? 500 : 200 }));
    const clock = await makeClock('2027-05-01T12:00:00Z');
    const user = (await under(clock.id, 'POST', '/users', { email: 'retried@example.com' })).body.user_id;
    await receiver.waitFor(1, (r) => r.path === '/retried', HUNG_MS);
    await api.settle();
    const [event] = (await under(clock.id, 'GET', `/v1/events?resource_id=${user}`)).body.events;
    const endpointId = endpoint.body.webhook_endpoint.id;
    const deliveriesOf = async () =>
      (await under(clock.id, 'GET', `/v1/events/${event.id}/attempts`)).body.deliveries.filter(
        (d: { endpoint_id: string }) => d.endpoint_id === endpointId,
      );
    // The first attempt went at once, recorded at the clock's instant (once its answer came); the retry is due 5 s later by the clock.
    const attempted = async (count: number) => {
      const [delivery] = await polled(deliveriesOf, ([read]) => read?.attempts.length === count);
      if (delivery?.attempts.length !== count) throw new Error(`no delivery with ${count} attempts`);
      return delivery;
    };
    const failed = await attempted(1);
    expect(failed).toMatchObject({ status: 'pending', next_attempt_at: '2027-05-01T12:00:05.000Z' });
    expect(failed.attempts.map((a: { at: string; status: number }) => [a.at, a.status])).toEqual([['2027-05-01T12:00:00.000Z', 500]]);
    // Real time runs an hour: the retry waits for the clock.
    real.advance(3_600_000);
    await api.settle();
    expect(receiver.received.filter((r) => r.path === '/retried')).toHaveLength(1);
    await advance(clock.id, '2027-05-01T12:01:00Z');
    const [retried] = await receiver.waitFor(2, (r) => r.path === '/retried', HUNG_MS).then((all) => all.slice(1));
    // Signed at the real time it was sent, for the receiver's check of its age.
    expect(Number(retried.headers['webhook-timestamp'])).toBe(Math.floor(real.now().getTime() / 1000));
    const succeeded = await attempted(2);
    expect(succeeded.status).toBe('succeeded');
    expect(succeeded.attempts.map((a: { at: string; status: number }) => [a.at, a.status])).toEqual([
      ['2027-05-01T12:00:00.000Z', 500],
      ['2027-05-01T12:00:05.000Z', 200],
    ]);
    // The sandbox's endpoint lists its clocks' deliveries beside its own.
    const listed = await api.call('GET', `/v1/webhook_endpoints/${endpointId}/deliveries`, { apiKey: test });
    expect(listed.body.deliveries.map((d: { id: string }) => d.id)).toEqual([succeeded.id]);
    receiver.answerBy(() => ({ status: 200 }));
  });

  it('sends a batch at its send_at in the clock’s time, to a real SMTP server, and closes the statement’s day', async () => {
    const clock = await makeClock('2027-03-01T10:00:00Z');
    // A sandbox emails for real only its partner's own people (docs/sandbox.md): the address is a member's.
    const email = 'clocked@example.com';
    const invited = await api.get(CommandBus).execute(new InviteMember(partner.partnerId, email, OPERATOR));
    await api.settle();
    const password = 'a long enough passphrase';
    await new SiteClient(api.url).submit(`/partner/sign-up?token=${invited.token}`, '/partner/sign-up', {
      token: invited.token,
      password,
      password_confirmation: password,
    });
    await api.settle();
    const user = (await under(clock.id, 'POST', '/users', { email })).body.user_id;
    const batch = await under(clock.id, 'POST', '/v1/targeted_email/batches', {
      deal_id: spaDay.id,
      user_ids: [user],
      mode: 'suppress',
      send_at: '2027-03-02T09:00:00Z',
    });
    expect(batch.status).toBe(201);
    // Not sent while the clock stands before send_at.
    await advance(clock.id, '2027-03-02T08:59:00Z');
    expect(smtp.to(email)).toHaveLength(0);
    await advance(clock.id, '2027-03-03T02:00:00Z');
    await eventually(
      async () => smtp.to(email).length,
      (sent) => sent > 0,
      HUNG_MS,
    );
    expect(smtp.to(email)).toHaveLength(1);
    const sent = await under(clock.id, 'GET', `/v1/targeted_email/batches/${batch.body.batch.id}?deal_id=${spaDay.id}`);
    expect(sent.body.batch.status).toBe('processed');
    // The daily regional email of each day the advance passed, to the clock's subscriber only.
    await under(clock.id, 'POST', `/users/${user}/subscriptions`, { zip: '60601' });
    const realSubscriber = (await api.call('POST', '/users', { apiKey: test, body: { email: 'real-time@example.com' } })).body.user_id;
    await api.call('POST', `/users/${realSubscriber}/subscriptions`, { apiKey: test, body: { zip: '60601' } });
    await advance(clock.id, '2027-03-05T02:00:00Z');
    await eventually(
      async () => smtp.to(email).length,
      (sent) => sent >= 3,
      HUNG_MS,
    );
    // 7:00 in Chicago (13:00 UTC) on March 3 and 4: two emails beside the batch's.
    expect(smtp.to(email).length).toBe(3);
    expect(smtp.to('real-time@example.com')).toHaveLength(0);
    // Two months in one advance: the daily emails of its last days only.
    await advance(clock.id, '2027-05-05T02:00:00Z');
    await eventually(
      async () => smtp.to(email).length,
      (sent) => sent >= 3 + CLOCK_DIGEST_DAYS,
      HUNG_MS,
    );
    await api.settle();
    expect(smtp.to(email).length).toBe(3 + CLOCK_DIGEST_DAYS);
    // The clock's statements close by its time: 2027-03-01 closed an hour after it ended.
    const day = await under(clock.id, 'GET', '/v1/settlements/2027-03-01');
    expect(day.body.settlement).toMatchObject({ livemode: false, state: 'closed' });
  });
});
