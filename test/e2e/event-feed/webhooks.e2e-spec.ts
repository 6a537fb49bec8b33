import { FEED_EVENT_TYPES } from '@deals/event-feed';
import { ManualClock } from '@deals/kernel';
import { ExpireCoupons } from '@deals/purchasing';
import { ReleaseExpiredHold } from '@deals/purchasing/commands/release-expired-hold/release-expired-hold.command';
import { CommandBus } from '@nestjs/cqrs';
import { Webhook } from 'standardwebhooks';
import { TestApi } from '../../support/api-harness';
import { ApiProcess, freePort } from '../../support/api-process';
import { cardLinked, chicago, spaDay } from '../../support/catalogue-fixtures';
import { SmtpSink } from '../../support/smtp-sink';
import { polled } from '../../support/polled';
import { tempDir } from '../../support/temp-dir';
import { buyerWithCard, REFUND_REFUSED_TEST_CARD, TEST_CARDS } from '../../support/test-cards';
import { ReceivedWebhook, WebhookReceiver } from '../../support/webhook-receiver';

const TYPES = FEED_EVENT_TYPES;
/** How long a wait may take before it counts as hung (under the tests' own two minutes). */
const HUNG_MS = 30_000;

/**
 * Webhooks (issue 37) from a real API process to a real HTTPS receiver, whose certificate the
 * process trusts through NODE_EXTRA_CA_CERTS: signed as Standard Webhooks says (checked with the
 * `standardwebhooks` package), retried on the schedule (short here), recorded per attempt, a 410
 * disabling its endpoint, a rotated secret signing beside the new one, and nothing lost to a SIGKILL.
 */
describe('webhooks to a real HTTPS receiver', () => {
  jest.setTimeout(120_000);
  const dir = tempDir('webhooks');
  let receiver: WebhookReceiver;
  let sink: SmtpSink;
  let api: ApiProcess;
  let apiKey: string;
  let basicAuth: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    sink = await SmtpSink.start();
    // The history a clock can make: a lapsed reservation, a recorded coupon expiry, a batch sent.
    const clock = new ManualClock(new Date('2026-06-15T12:00:00Z'));
    const setup = await TestApi.start({ clock, dataDir: dir.path, env: { COUPON_EXPIRY_SWEEP_MS: '3600000', SMTP_URL: sink.url } });
    const partner = await setup.createPartner();
    apiKey = partner.apiKey;
    basicAuth = `Basic ${Buffer.from(`${partner.username}:${partner.password}`).toString('base64')}`;
    await setup.importRegions([chicago]);
    await setup.importDeals([
      // On sale from the test's clock to after the real one's now: the process after the restart runs on the real clock.
      { ...spaDay, max_per_user: undefined, end_at: '2030-01-01T00:00:00Z', expires_at: '2030-12-31T00:00:00Z' },
      { ...spaDay, id: 'short-lived', max_per_user: undefined, expires_at: '2026-06-15T12:02:00Z' },
      { ...cardLinked, end_at: '2030-01-01T00:00:00Z' },
    ]);
    const call = (method: string, path: string, body?: unknown) => setup.call(method, path, { apiKey, body });
    const userId = (await call('POST', '/users', { email: 'clock@example.com' })).body.user_id;
    const reserved = (await call('POST', '/purchases/reserve', { deal_id: spaDay.id, num_bought: 1 })).body.purchase;
    const shortLived = (await call('POST', '/purchases/reserve', { deal_id: 'short-lived', num_bought: 1 })).body.purchase;
    expect((await call('PUT', `/purchases/${shortLived.id}/claim`, { user_id: userId })).status).toBe(200);
    clock.set('2026-06-15T12:06:00Z');
    await setup.get(CommandBus).execute(new ReleaseExpiredHold(spaDay.id, reserved.id));
    await setup.settle();
    expect((await setup.get(ExpireCoupons).sweep()).recorded).toBe(1);
    // Two batches sent at one send_at: one processed; one failed (its only recipient refused for good).
    const refusedId = (await call('POST', '/users', { email: 'refused@example.com' })).body.user_id;
    sink.refuse.set('refused@example.com', 550);
    clock.set('2026-06-15T23:59:59Z');
    const batches: string[] = [];
    for (const user of [userId, refusedId]) {
      const batch = await call('POST', '/v1/targeted_email/batches', {
        deal_id: spaDay.id,
        user_ids: [user],
        mode: 'augment',
        send_at: '2026-06-16T00:00:00Z',
      });
      expect(batch.status).toBe(201);
      batches.push(batch.body.batch.id);
    }
    clock.set('2026-06-16T00:00:02Z');
    const statuses = async () =>
      Promise.all(
        batches.map(async (id) => (await call('GET', `/v1/targeted_email/batches/${id}?deal_id=${spaDay.id}`)).body.batch.status),
      );
    expect(await polled(statuses, (now) => !now.includes('pending'), HUNG_MS, 100)).toEqual(['processed', 'failed']);
    await setup.stop();

    env = {
      NODE_EXTRA_CA_CERTS: receiver.caFile,
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'on',
      WEBHOOK_RETRY_DELAYS_MS: '300,300,300,300,300,300,300',
    };
    api = await ApiProcess.start(dir.path, await freePort(), env);
  });
  afterAll(async () => {
    await api?.stop();
    await receiver?.close();
    await sink?.close();
    dir.remove();
  });

  const key = (path: string) => `${path}${path.includes('?') ? '&' : '?'}api_key=${apiKey}`;
  const call = (method: string, path: string, body?: unknown) => api.call(method, key(path), body);
  const register = async (path: string, types: string[]) => {
    const reply = await call('POST', '/v1/webhook_endpoints', { url: receiver.url(path), types });
    expect(reply.status).toBe(201);
    return reply.body as { webhook_endpoint: { id: string }; secret: string };
  };
  const at = (path: string) => (r: ReceivedWebhook) => r.path === path;
  const verified = (secret: string, request: ReceivedWebhook) =>
    new Webhook(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as { id: string; type: string; data: unknown };

  it('delivers every type, live and replayed, each signed with the endpoint’s secret', async () => {
    const { webhook_endpoint: endpoint, secret } = await register('/all', ['*']);
    // What happened before the endpoint existed: sent on request, oldest first.
    const replay = await call('POST', `/v1/webhook_endpoints/${endpoint.id}/replay`, {});
    expect(replay.status).toBe(200);
    const before = replay.body.queued as number;
    expect(before).toBeGreaterThanOrEqual(5);

    // What happens now: sent as it happens.
    const userId = (await call('POST', '/users', { email: 'ada@example.com' })).body.user_id;
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
    await call('PUT', `/coupons/${bought.body.purchase.coupons[0].id}/redeem`);
    // A refund that succeeds (its coupon cancelled), and one the card's issuer refuses.
    const refunded = await call('POST', `/purchases/${bought.body.purchase.id}/refunds`, { reason: 'requested_by_customer' });
    expect(refunded.body.refund).toMatchObject({ state: 'succeeded', coupon_ids: [bought.body.purchase.coupons[1].id] });
    expect((await call('POST', `/coupons/${bought.body.purchase.coupons[0].id}/redemption_rollbacks`, { reason: 'other' })).status).toBe(
      200,
    );
    const refuser = await buyerWithCard({ call }, apiKey, 'refuser@example.com', REFUND_REFUSED_TEST_CARD);
    const refusedPurchase = await call('POST', '/purchases', {
      deal_id: spaDay.id,
      quantity: 1,
      user_id: refuser.userId,
      credit_card_id: refuser.cardId,
      expected_price_per_unit: spaDay.current_price,
    });
    expect((await call('POST', `/purchases/${refusedPurchase.body.purchase.id}/refunds`, { reason: 'duplicate' })).body.refund.state).toBe(
      'failed',
    );
    const reserved = (await call('POST', '/purchases/reserve', { deal_id: spaDay.id, num_bought: 1 })).body.purchase;
    await call('PUT', `/purchases/${reserved.id}/release`);
    const resale = await api.callWithHeaders(
      'POST',
      '/api/v3/resellers/purchases',
      {
        deal_id: spaDay.id,
        quantity: 1,
        transaction_reference: 'r-1',
        transaction_date: new Date().toISOString(),
        transaction_amount: 4900,
        first_name: 'Bo',
        last_name: 'Lee',
      },
      { authorization: basicAuth },
    );
    expect(resale.status).toBe(200);
    expect(
      (await api.callWithHeaders('DELETE', `/api/v3/coupons/${resale.body.coupons[0].id}/cancel`, undefined, { authorization: basicAuth }))
        .status,
    ).toBe(200);
    const link = (await call('POST', '/card_links', { user_id: userId, deal_id: cardLinked.id })).body.card_link;
    await call('PUT', `/card_links/${link.id}/unlink`);
    await call('PUT', `/card_links/${link.id}/link`);
    await call('PUT', `/card_links/${link.id}/redeem`, {
      transaction_amount: 2500,
      transaction_date: new Date().toISOString().slice(0, 19),
      transaction_reference: 't-1',
      max_redemption: true,
    });
    // Its refund links it again; then a transaction in phases.
    const phase = (reference: string, body: Record<string, unknown>) =>
      call('PUT', `/card_links/${link.id}/transactions/${reference}`, { transaction_date: new Date().toISOString().slice(0, 19), ...body });
    expect((await phase('t-1', { phase: 'refunded', transaction_amount: 2500 })).status).toBe(200);
    expect((await phase('t-2', { phase: 'authorised', transaction_amount: 3000 })).status).toBe(200);
    expect((await phase('t-2', { phase: 'cleared', transaction_amount: 3000 })).status).toBe(200);
    const subscription = (await call('POST', `/users/${userId}/subscriptions`, { zip: 60601 })).body.subscription;
    await call('PUT', `/subscriptions/${subscription.id}`, { status: 'inactive' });
    // A user erased: the partner is told, without any of the user's personal data.
    const forgotten = (await call('POST', '/users', { email: 'forget.me@example.com', first_name: 'Forgotten' })).body.user_id;
    expect((await call('DELETE', `/users/${forgotten}/personal_data`)).status).toBe(200);
    // A bulk job, completed in the background.
    const job = (
      await call('POST', '/v1/bulk_jobs', { kind: 'saved_deals', items: [{ reference: 'w-1', user_id: userId, deal_id: spaDay.id }] })
    ).body.bulk_job;
    while ((await call('GET', `/v1/bulk_jobs/${job.id}`)).body.bulk_job.status !== 'completed') await new Promise((r) => setTimeout(r, 20));

    // The feed is read by cursor: answers do not wait for it (docs/webhooks.md).
    await api.ready();
    const feed = (await call('GET', '/v1/events?per_page=1000')).body.events as Array<{ id: string; type: string }>;
    const requests = await receiver.waitFor(feed.length, at('/all'), 30_000);
    const bodies = requests.map((r) => verified(secret, r));
    expect(new Set(bodies.map((b) => b.id))).toEqual(new Set(feed.map((e) => e.id)));
    for (const request of requests) expect(request.headers['webhook-id']).toBe(JSON.parse(request.body).id);
    const received = new Set(bodies.map((b) => b.type));
    expect(TYPES.filter((t) => !received.has(t))).toEqual([]);
    // What was delivered is what the feed lists.
    const completed = feed.find((e) => e.type === 'purchase.completed')!;
    expect(bodies.find((b) => b.id === completed.id)).toEqual(completed);
    // An erased user's events, read after the erasure (its creation's too), carry none of its personal data.
    const forgottenEvents = feed.filter((e) => (e as { resource_id?: string }).resource_id === forgotten);
    expect(forgottenEvents.map((e) => e.type).sort()).toEqual(['user.created', 'user.erased']);
    expect(JSON.stringify(forgottenEvents)).not.toMatch(/Forgotten|forget\.me/);
    // Every delivery succeeded at its first attempt, and says so.
    const attempts = (await call('GET', `/v1/events/${completed.id}/attempts`)).body.deliveries;
    expect(attempts).toEqual([
      expect.objectContaining({
        endpoint_id: endpoint.id,
        status: 'succeeded',
        attempts: [expect.objectContaining({ attempt: 1, status: 200, error: null })],
      }),
    ]);
  });

  it('retries a receiver that fails three times, then succeeds; records each attempt', async () => {
    const { webhook_endpoint: endpoint } = await register('/flaky', ['user.created']);
    receiver.answerBy((r) =>
      r.path === '/flaky' && receiver.received.filter(at('/flaky')).length <= 3 ? { status: 500, body: 'not now' } : { status: 200 },
    );
    await call('POST', '/users', { email: 'flaky@example.com' });
    await receiver.waitFor(4, at('/flaky'), HUNG_MS);
    const [delivery] = await polled(
      async () => (await call('GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries`)).body.deliveries,
      ([latest]: any[]) => latest?.status === 'succeeded',
      HUNG_MS,
    );
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attempts.map((a: any) => [a.attempt, a.status, a.response])).toEqual([
      [1, 500, 'not now'],
      [2, 500, 'not now'],
      [3, 500, 'not now'],
      [4, 200, ''],
    ]);
    receiver.answerBy(() => ({ status: 200 }));
  });

  it('disables an endpoint whose receiver answers 410 Gone; enabled again, it is sent what comes next', async () => {
    const { webhook_endpoint: endpoint } = await register('/gone', ['user.created']);
    receiver.answerBy((r) => (r.path === '/gone' ? { status: 410 } : { status: 200 }));
    await call('POST', '/users', { email: 'gone1@example.com' });
    await receiver.waitFor(1, at('/gone'), HUNG_MS);
    const state = await polled(
      async () => (await call('GET', `/v1/webhook_endpoints/${endpoint.id}`)).body.webhook_endpoint,
      (now) => now?.enabled === false,
      HUNG_MS,
    );
    expect(state).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    await call('POST', '/users', { email: 'gone2@example.com' });
    receiver.answerBy(() => ({ status: 200 }));
    expect((await call('PUT', `/v1/webhook_endpoints/${endpoint.id}`, { enabled: true })).body.webhook_endpoint).toMatchObject({
      enabled: true,
      disabled_reason: null,
    });
    await call('POST', '/users', { email: 'gone3@example.com' });
    const [, second] = await receiver.waitFor(2, at('/gone'), HUNG_MS);
    expect(JSON.parse(second.body).data).toMatchObject({ id: expect.any(String) });
    // The user made while it was disabled was not sent.
    expect(receiver.received.filter(at('/gone'))).toHaveLength(2);
  });

  it('signs with the old and the new secret for a day after a rotation', async () => {
    const { webhook_endpoint: endpoint, secret: old } = await register('/rotated', ['user.created']);
    const rotated = await call('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(old);
    await call('POST', '/users', { email: 'rotated@example.com' });
    const [request] = await receiver.waitFor(1, at('/rotated'), HUNG_MS);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(old, request).type).toBe('user.created');
    expect(verified(fresh, request).type).toBe('user.created');
  });

  it('loses no delivery to a SIGKILL: what was pending is sent after the restart', async () => {
    await register('/slow', ['user.created']);
    // The receiver holds its answers: the process is killed with deliveries in flight and pending.
    receiver.answerBy((r) => (r.path === '/slow' ? { status: 200, delayMs: 3000 } : { status: 200 }));
    const emails = Array.from({ length: 20 }, (_, i) => `kill${i}@example.com`);
    const users: string[] = [];
    for (const email of emails) users.push((await call('POST', '/users', { email })).body.user_id);
    await api.kill();
    receiver.answerBy(() => ({ status: 200 }));
    api = await ApiProcess.start(dir.path, await freePort(), env);
    const created = (r: ReceivedWebhook) => r.path === '/slow';
    const got = await polled(
      async () => new Set(receiver.received.filter(created).map((r) => JSON.parse(r.body).resource_id)),
      (now) => users.every((u) => now.has(u)),
      HUNG_MS,
    );
    expect(users.filter((u) => !got.has(u))).toEqual([]);
  });
});
