import { WebhookSender } from '@deals/event-feed';
import { EventStore, ManualClock, OPERATOR } from '@deals/kernel';
import { InviteMember } from '@deals/partner-site';
import { humanUtc } from '@deals/wire';
import { CommandBus } from '@nestjs/cqrs';
import { Webhook } from 'standardwebhooks';
import { TestApi } from '../../support/api-harness';
import { eventually } from '../../support/eventually';
import { inputValue, SiteClient } from '../../support/site-client';
import { ReceivedWebhook, WebhookReceiver } from '../../support/webhook-receiver';

const PASSWORD = 'a long and private passphrase';
/** The secret a page shows, as a browser shows it (Handlebars writes `=` as `&#x3D;`). */
/** The longest run of `letter` in a page: how much of a long value it showed back. */
const longestRun = (html: string, letter: string) =>
  Math.max(0, ...(html.match(new RegExp(`${letter}+`, 'g')) ?? []).map((run) => run.length));
/** The most of a client's text a page shows back. */
const MAX_SHOWN = 1000;
const secretOn = (html: string) => /<code id="secret">(whsec_[^<]+)<\/code>/.exec(html)![1].replace(/&#x3D;/g, '=');

/**
 * The partner site's webhooks pages over HTTPS against the real application, delivering to a real
 * HTTPS receiver: register (the secret shown once), deliveries with each attempt, an event sent
 * again, disable and enable, rotate (both secrets sign), remove; the CSRF check, another partner's
 * endpoint not found, the member as the actor of the feed's events.
 */
describe("the partner site's webhooks pages", () => {
  // Deliveries and the pages that show them awaited up to ceilings that mean hung.
  jest.setTimeout(90_000);
  // The real time (the receiver's verification refuses timestamps five minutes off), kept still.
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  let api: TestApi;
  let receiver: WebhookReceiver;
  let partner: Awaited<ReturnType<TestApi['createPartner']>>;
  let rival: Awaited<ReturnType<TestApi['createPartner']>>;
  let site: SiteClient;
  let rivalSite: SiteClient;

  const member = async (email: string, partnerId: string) => {
    const { token } = await api.get(CommandBus).execute(new InviteMember(partnerId, email, OPERATOR));
    await api.settle();
    const client = new SiteClient(api.url);
    const link = `/partner/sign-up?token=${token}`;
    expect((await client.submit(link, '/partner/sign-up', { token, password: PASSWORD, password_confirmation: PASSWORD })).status).toBe(
      303,
    );
    expect((await client.signIn(email, PASSWORD)).status).toBe(303);
    return client;
  };
  const newUser = async (email: string) => {
    const reply = await api.call('POST', '/users', { apiKey: partner.apiKey, body: { email } });
    expect(reply.status).toBe(200);
    await api.settle();
    return reply.body.user_id as string;
  };
  const verified = (secret: string, request: ReceivedWebhook) =>
    new Webhook(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as { id: string; type: string };
  const endpointOf = async (id: string) =>
    (await api.call('GET', '/v1/webhook_endpoints', { apiKey: partner.apiKey })).body.webhook_endpoints.find(
      (e: { id: string }) => e.id === id,
    );
  /** The deliveries to the receiver's `path` once there are `count` (after each answer, a retry's back-off or a sending again). */
  const deliveriesTo = (path: string, count: number) => receiver.waitFor(count, (r) => r.path === path, 30_000);

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await TestApi.start({ clock, env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'on', WEBHOOK_RETRY_DELAYS_MS: '200,200,200' } });
    // The receiver's certificate trusted by the sender in this process (a child process would take NODE_EXTRA_CA_CERTS).
    (api.get(WebhookSender) as unknown as { agent: { options: { ca?: string } } }).agent.options.ca = receiver.ca;
    partner = await api.createPartner('Hooked partner');
    rival = await api.createPartner('Rival partner');
    site = await member('hooks@example.com', partner.partnerId);
    rivalSite = await member('rival@example.com', rival.partnerId);
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
  });

  it('registers an endpoint, shows its secret once, lists its deliveries with each attempt (escaped), sends an event again', async () => {
    const empty = await site.get('/partner/webhooks');
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('<a href="/partner/webhooks" aria-current="page">Webhooks</a>');
    expect(empty.text).toContain('No endpoint yet.');
    expect(empty.text).toContain('name="type_purchase.completed"');

    // Refused forms come back with what was typed and why.
    const notHttps = await site.submit('/partner/webhooks', '/partner/webhooks', { url: 'http://example.com/hook', all: 'on' });
    expect(notHttps.status).toBe(422);
    expect(notHttps.text).toContain('url the URL must use https');
    expect(inputValue(notHttps.text, 'url')).toBe('http://example.com/hook');
    const noType = await site.submit('/partner/webhooks', '/partner/webhooks', { url: receiver.url('/site') });
    expect(noType.status).toBe(422);
    expect(noType.text).toContain('event types: choose at least one, or all');

    const registered = await site.submit('/partner/webhooks', '/partner/webhooks', {
      url: receiver.url('/site'),
      description: 'CRM <sync>',
      'type_user.created': 'on',
      'type_user.updated': 'on',
    });
    expect(registered.status).toBe(200);
    expect(registered.headers['cache-control']).toBe('no-store');
    expect(registered.text).toContain('shown only this once');
    const secret = secretOn(registered.text);
    const endpointId = /Endpoint <code>(we_[^<]+)<\/code>/.exec(registered.text)![1];

    // Never again: not on the list, not on its deliveries, not through the API.
    const list = await site.get('/partner/webhooks');
    expect(list.text).toContain(receiver.url('/site'));
    expect(list.text).toContain('user.created, user.updated');
    expect(list.text).toContain('CRM &lt;sync&gt;');
    expect(list.text).toContain('>enabled<');
    expect(list.text).not.toContain(secret.slice(0, 40));
    expect((await site.get(`/partner/webhooks/${endpointId}`)).text).not.toContain(secret.slice(0, 40));
    expect(await endpointOf(endpointId)).toMatchObject({
      url: receiver.url('/site'),
      types: ['user.created', 'user.updated'],
      enabled: true,
    });
    expect(JSON.stringify(await api.call('GET', '/v1/webhook_endpoints', { apiKey: partner.apiKey }))).not.toContain(secret.slice(0, 40));

    // A user made through the API: its event is delivered, signed with the secret the page showed.
    receiver.answerBy(() => ({ status: 200, body: '<script>alert("hi")</script> & thanks' }));
    const userId = await newUser('hooked@example.com');
    const [delivered] = await deliveriesTo('/site', 1);
    const event = verified(secret, delivered);
    expect(event.type).toBe('user.created');

    const deliveries = await eventually(
      () => site.get(`/partner/webhooks/${endpointId}`),
      (page) => page.text.includes('>succeeded<'),
    );
    expect(deliveries.status).toBe(200);
    expect(deliveries.text).toContain(event.id);
    expect(deliveries.text).toMatch(
      /<td>1<\/td><td>[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d UTC \d{4}<\/td><td class="state-succeeded">200<\/td><td>\d+ ms<\/td>/,
    );
    expect(deliveries.text).toContain('&lt;script&gt;alert(&quot;hi&quot;)&lt;/script&gt; &amp; thanks');
    expect(deliveries.text).not.toContain('<script');

    // Sent again: a second delivery of the same event, with the same webhook-id.
    const again = await site.submit(`/partner/webhooks/${endpointId}`, `/partner/webhooks/${endpointId}/redeliver`, { event_id: event.id });
    expect(again).toMatchObject({ status: 303, location: `/partner/webhooks/${endpointId}?sent=1` });
    const both = await deliveriesTo('/site', 2);
    expect(both[1].headers['webhook-id']).toBe(event.id);
    const after = await eventually(
      () => site.get(`/partner/webhooks/${endpointId}?sent=1`),
      (page) => page.text.split('>succeeded<').length === 3,
    );
    expect(after.text).toContain('The event is sent again');
    // An event that is not the partner's is not found.
    expect(
      (await site.submit(`/partner/webhooks/${endpointId}`, `/partner/webhooks/${endpointId}/redeliver`, { event_id: 'evt_nope' })).status,
    ).toBe(404);

    // The partner's latest events.
    const events = await site.get('/partner/events');
    expect(events.status).toBe(200);
    expect(events.text).toContain(event.id);
    expect(events.text).toContain('<code>user.created</code>');
    expect(events.text).toContain(`user <code>${userId}</code>`);
    expect(events.text).toContain(humanUtc(clock.now()));
    expect((await site.get('/partner/events?before=evt_nope')).status).toBe(404);

    // The member is the actor of the feed's events the pages made.
    const log = await api.get(EventStore).readAll({ after: null, maxCount: 10_000 });
    const memberId = (
      log.find((e) => e.type === 'MemberInvited' && (e.data as { email: string }).email === 'hooks@example.com')!.data as {
        memberId: string;
      }
    ).memberId;
    const actors = (type: string) =>
      log.filter((e) => e.type === type && (e.data as { endpointId?: string }).endpointId === endpointId).map((e) => e.metadata.actor);
    expect(actors('WebhookEndpointCreated')).toEqual([`member:${memberId}`]);
    expect(actors('WebhookRedeliveryRequested')).toEqual([`member:${memberId}`]);
    expect(JSON.stringify(log)).not.toContain(secret.slice(0, 40));
  });

  it('disables and enables, rotates the secret (the old one signs beside the new for 24 hours), removes; the reasons the service disabled one', async () => {
    const registered = await site.submit('/partner/webhooks', '/partner/webhooks', { url: receiver.url('/rotated'), all: 'on' });
    const first = secretOn(registered.text);
    const endpointId = /Endpoint <code>(we_[^<]+)<\/code>/.exec(registered.text)![1];
    expect(registered.text).toContain('event types: all types');

    const disabled = await site.submit('/partner/webhooks', `/partner/webhooks/${endpointId}/disable`, {});
    expect(disabled).toMatchObject({ status: 303, location: '/partner/webhooks?done=disabled' });
    expect((await site.get('/partner/webhooks?done=disabled')).text).toContain('The endpoint is disabled');
    expect(await endpointOf(endpointId)).toMatchObject({ enabled: false, disabled_reason: null });
    const list = await site.get('/partner/webhooks');
    expect(list.text).toContain(`action="/partner/webhooks/${endpointId}/enable"`);
    expect(list.text).toContain('by your team');
    expect((await site.submit('/partner/webhooks', `/partner/webhooks/${endpointId}/enable`, {})).location).toBe(
      '/partner/webhooks?done=enabled',
    );
    expect(await endpointOf(endpointId)).toMatchObject({ enabled: true });

    const rotated = await site.submit('/partner/webhooks', `/partner/webhooks/${endpointId}/rotate`, {});
    expect(rotated.status).toBe(200);
    const second = secretOn(rotated.text);
    expect(second).not.toBe(first);
    expect(rotated.text).toContain(`keeps signing until ${humanUtc(new Date(clock.now().getTime() + 24 * 3_600_000))} (24 hours)`);
    expect((await site.get('/partner/webhooks')).text).not.toContain(second.slice(0, 40));
    await newUser('rotated@example.com');
    const [signed] = await deliveriesTo('/rotated', 1);
    expect(verified(first, signed).type).toBe('user.created');
    expect(verified(second, signed).type).toBe('user.created');

    // The service's own reasons: failing since the first failure, then disabled when the receiver answers 410 Gone.
    const gone = await site.submit('/partner/webhooks', '/partner/webhooks', { url: receiver.url('/gone'), 'type_user.created': 'on' });
    const goneId = /Endpoint <code>(we_[^<]+)<\/code>/.exec(gone.text)![1];
    const goneSoFar = () => receiver.received.filter((r) => r.path === '/gone').length;
    receiver.answerBy((r) => ({ status: r.path !== '/gone' ? 200 : goneSoFar() === 1 ? 500 : 410 }));
    await newUser('gone@example.com');
    await deliveriesTo('/gone', 2);
    const goneRow = await eventually(
      () => site.get('/partner/webhooks'),
      (page) => page.text.includes('by the service: your receiver answered 410 Gone'),
    );
    expect(goneRow.text).toContain(`<span class="state-disabled">${humanUtc(clock.now())}</span>`);
    const goneDeliveries = await site.get(`/partner/webhooks/${goneId}`);
    expect(goneDeliveries.text).toContain('<td class="state-failed">500</td>');
    expect(goneDeliveries.text).toContain('<td class="state-failed">410</td>');

    const removed = await site.submit('/partner/webhooks', `/partner/webhooks/${endpointId}/remove`, {});
    expect(removed).toMatchObject({ status: 303, location: '/partner/webhooks?done=removed' });
    expect((await site.get('/partner/webhooks')).text).not.toContain(receiver.url('/rotated'));
    expect((await site.get(`/partner/webhooks/${endpointId}`)).status).toBe(404);
    expect(await endpointOf(endpointId)).toBeUndefined();
  });

  it('shows back at most a bounded part of what a client sent: ids not found, a refused form', async () => {
    const registered = await site.submit('/partner/webhooks', '/partner/webhooks', { url: receiver.url('/echo'), all: 'on' });
    const endpointId = /Endpoint <code>(we_[^<]+)<\/code>/.exec(registered.text)![1];
    const notFound = await site.submit(`/partner/webhooks/${endpointId}`, `/partner/webhooks/${endpointId}/redeliver`, {
      event_id: 'Z'.repeat(60_000),
    });
    expect(notFound.status).toBe(404);
    expect(longestRun(notFound.text, 'Z')).toBeLessThanOrEqual(MAX_SHOWN);
    expect(notFound.text.length).toBeLessThan(10_000);
    const before = await site.get(`/partner/events?before=${'Y'.repeat(12_000)}`);
    expect(before.status).toBe(404);
    expect(longestRun(before.text, 'Y')).toBeLessThanOrEqual(MAX_SHOWN);
    // A refused form comes back with each value at most as long as its field may be.
    const refused = await site.submit('/partner/webhooks', '/partner/webhooks', {
      url: `https://hooks.example.com/${'U'.repeat(30_000)}`,
      description: 'D'.repeat(30_000),
      all: 'on',
    });
    expect(refused.status).toBe(422);
    expect(longestRun(refused.text, 'U')).toBeLessThanOrEqual(2048);
    expect(longestRun(refused.text, 'D')).toBeLessThanOrEqual(500);
    expect(refused.text.length).toBeLessThan(20_000);
  });

  it('refuses a form without the page’s token (403); another partner’s endpoint is not found (404)', async () => {
    const registered = await site.submit('/partner/webhooks', '/partner/webhooks', { url: receiver.url('/guarded'), all: 'on' });
    const endpointId = /Endpoint <code>(we_[^<]+)<\/code>/.exec(registered.text)![1];

    for (const action of ['disable', 'rotate', 'remove']) {
      expect((await site.post(`/partner/webhooks/${endpointId}/${action}`, {})).status).toBe(403);
      // A token of another session is no good either.
      const rivalToken = inputValue((await rivalSite.get('/partner/webhooks')).text, '_csrf')!;
      expect((await site.post(`/partner/webhooks/${endpointId}/${action}`, { _csrf: rivalToken })).status).toBe(403);
    }
    expect((await site.post('/partner/webhooks', { url: receiver.url('/forged'), all: 'on' })).status).toBe(403);

    // The rival's person, with their own good token, finds nothing of this partner's endpoint.
    expect((await rivalSite.get(`/partner/webhooks/${endpointId}`)).status).toBe(404);
    for (const action of ['disable', 'enable', 'rotate', 'remove']) {
      const refused = await rivalSite.submit('/partner/webhooks', `/partner/webhooks/${endpointId}/${action}`, {});
      expect(refused.status).toBe(404);
      expect(refused.text).toContain('Not found');
    }
    expect((await rivalSite.submit('/partner/webhooks', `/partner/webhooks/${endpointId}/redeliver`, { event_id: 'evt_x' })).status).toBe(
      404,
    );
    expect((await rivalSite.get('/partner/webhooks')).text).not.toContain(receiver.url('/guarded'));
    expect((await rivalSite.get('/partner/events')).text).not.toContain('user.created');

    // Nothing changed: enabled, the one secret, listed once.
    const endpoint = await endpointOf(endpointId);
    expect(endpoint).toMatchObject({ enabled: true, url: receiver.url('/guarded') });
    const list = (await site.get('/partner/webhooks')).text;
    expect(list).toContain(`action="/partner/webhooks/${endpointId}/disable"`);
    expect(list).not.toContain('/forged');
  });
});
