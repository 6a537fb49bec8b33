import { Clock, EventStore, ManualClock, Mailer, OutgoingEmail, Scheduler, ViewProgress } from '@deals/kernel';
import { MemoryEventStore } from '@deals/testing';
import { WebhookSettings } from '../commands/webhook-settings';
import type { WebhookAttempt, WebhookSender } from '../delivery/webhook-sender';
import { WebhookSecrets } from '../delivery/webhook-secrets';
import { webhookDeliveryStream } from '../domain/webhook-delivery/webhook-delivery.events';
import { webhookEndpointStream } from '../domain/webhook-endpoint/webhook-endpoint.events';
import type { FeedRenderer } from '../http/feed-renderer';
import type { FeedEvent, WebhookDelivery } from '../projections/event-feed/feed-documents';
import type { WebhookEndpointView } from '../projections/webhook-endpoints/webhook-endpoints.projection';
import type { EventFeedQueries } from '../queries/event-feed.queries';
import type { WebhookEndpointQueries } from '../queries/webhook-endpoint.queries';
import { DeliverWebhooks } from './deliver-webhooks.reaction';
import type { WebhookNoticeRecipients } from './webhook-notice-recipients';

const AT = '2026-06-15T12:00:00.000Z';
const endpoint: WebhookEndpointView = {
  _id: 'we_1',
  _pos: '1',
  partnerId: 'p1',
  url: 'https://hooks.example.com/in',
  description: '',
  types: ['*'],
  enabled: true,
  disabledReason: null,
  salts: [{ salt: 'salt', until: null }],
  failingSince: null,
  createdAt: AT,
  deleted: false,
};
/** The delivery as the feed shows it: pending, no attempt yet. */
const pending: WebhookDelivery = {
  _id: 'whd_1',
  _pos: '2',
  kind: 'delivery',
  partnerId: 'p1',
  endpointId: 'we_1',
  eventId: 'evt_1',
  eventType: 'user.created',
  order: '2.00',
  createdAt: AT,
  status: 'pending',
  attempts: [],
  nextAttemptAt: AT,
};
const event = { _id: 'evt_1', _pos: '2', kind: 'event', partnerId: 'p1', type: 'user.created' } as FeedEvent;
const succeeded: WebhookAttempt = { status: 200, latencyMs: 5, responseExcerpt: '', error: null, outcome: 'succeeded' };

/** The reaction over a log in memory, a feed view that shows `pending` (whatever the log says) and a sender that counts. */
function deliverWebhooks(
  options: {
    shown?: WebhookEndpointView;
    answer?: WebhookAttempt;
    failing?: string;
    now?: string;
    people?: Array<{ id: string; email: string }>;
  } = {},
) {
  const store = new MemoryEventStore();
  store.elsewhere(webhookEndpointStream(endpoint._id), {
    type: 'WebhookEndpointCreated',
    data: {
      endpointId: endpoint._id,
      partnerId: 'p1',
      url: endpoint.url,
      description: '',
      types: ['*'],
      enabled: true,
      secretSalt: 'salt',
      createdAt: AT,
    },
  });
  if (options.failing)
    store.elsewhere(webhookEndpointStream(endpoint._id), {
      type: 'WebhookEndpointFailing',
      data: { endpointId: endpoint._id, partnerId: 'p1', since: options.failing },
    });
  const send = jest.fn(async () => options.answer ?? succeeded);
  const mails: OutgoingEmail[] = [];
  const reaction = new DeliverWebhooks(
    { handle: () => undefined } as unknown as Scheduler,
    { onCommitted: () => undefined, onAdopted: () => undefined } as unknown as ViewProgress,
    { delivery: async () => pending, event: async () => event } as unknown as EventFeedQueries,
    { byId: async () => options.shown ?? endpoint } as unknown as WebhookEndpointQueries,
    { render: async (e: FeedEvent) => ({ id: e._id }) } as unknown as FeedRenderer,
    new WebhookSecrets(Buffer.alloc(32, 7)),
    { send } as unknown as WebhookSender,
    { allowPrivateAddresses: false, retryDelaysMs: [300], timeoutMs: 1000 } as WebhookSettings,
    store as EventStore,
    new ManualClock(new Date(options.now ?? AT)) as Clock,
    { send: async (mail: OutgoingEmail) => void mails.push(mail) } as unknown as Mailer,
    { of: async () => options.people ?? [] } as unknown as WebhookNoticeRecipients,
  );
  return { reaction, store, send, mails };
}

describe('DeliverWebhooks: one attempt', () => {
  it('sends an attempt the delivery has not made, and records it on its stream', async () => {
    const { reaction, store, send } = deliverWebhooks();
    await reaction.attempt(pending._id, 1);
    expect(send).toHaveBeenCalledTimes(1);
    expect(
      (await store.readStream(webhookDeliveryStream(pending._id))).map((e) => [e.type, (e.data as { attempt: number }).attempt]),
    ).toEqual([['WebhookDeliveryAttempted', 1]]);
  });

  // The bug: a job armed again by a second worker's commit (or by a start's re-arming) ran the
  // attempt a second time before the feed showed the first's record, and the receiver got it twice.
  it('sends nothing for an attempt made already that the feed does not show yet', async () => {
    const { reaction, store, send } = deliverWebhooks();
    await reaction.attempt(pending._id, 1);
    await reaction.attempt(pending._id, 1);
    expect(send).toHaveBeenCalledTimes(1);
    expect(await store.readStream(webhookDeliveryStream(pending._id))).toHaveLength(1);
  });

  const endpointEvents = async (store: MemoryEventStore) =>
    (await store.readStream(webhookEndpointStream(endpoint._id))).map((e) => [e.type, (e.data as { reason?: string }).reason]);
  const failed: WebhookAttempt = { status: 500, latencyMs: 5, responseExcerpt: 'no', error: 'answered 500', outcome: 'failed' };

  it('marks the endpoint failing at its first failure, and leaves it enabled', async () => {
    const { reaction, store } = deliverWebhooks({ answer: failed });
    await reaction.attempt(pending._id, 1);
    expect(await endpointEvents(store)).toEqual([
      ['WebhookEndpointCreated', undefined],
      ['WebhookEndpointFailing', undefined],
    ]);
  });

  it('disables an endpoint failing for five days, and tells the partner’s people by email', async () => {
    const since = '2026-06-10T11:00:00.000Z';
    const { reaction, store, mails } = deliverWebhooks({
      answer: failed,
      failing: since,
      shown: { ...endpoint, failingSince: since },
      people: [{ id: 'm1', email: 'ops@example.com' }],
    });
    await reaction.attempt(pending._id, 1);
    expect((await endpointEvents(store)).slice(-1)).toEqual([['WebhookEndpointDisabled', 'failing']]);
    expect(mails.map((m) => [m.to, m.subject])).toEqual([['ops@example.com', 'Your webhook endpoint was disabled']]);
    expect(mails[0].text).toContain(endpoint.url);
  });

  it('keeps an endpoint failing for less than five days enabled', async () => {
    const since = '2026-06-10T12:00:01.000Z';
    const { reaction, store, mails } = deliverWebhooks({ answer: failed, failing: since, shown: { ...endpoint, failingSince: since } });
    await reaction.attempt(pending._id, 1);
    expect((await endpointEvents(store)).map(([type]) => type)).toEqual(['WebhookEndpointCreated', 'WebhookEndpointFailing']);
    expect(mails).toEqual([]);
  });

  it('disables the endpoint at once on 410 Gone, and tries that delivery no more', async () => {
    const { reaction, store } = deliverWebhooks({
      answer: { status: 410, latencyMs: 5, responseExcerpt: '', error: 'answered 410 Gone', outcome: 'gone' },
    });
    await reaction.attempt(pending._id, 1);
    expect((await endpointEvents(store)).slice(-1)).toEqual([['WebhookEndpointDisabled', 'gone']]);
    const [attempt] = await store.readStream(webhookDeliveryStream(pending._id));
    expect(attempt.data).toMatchObject({ outcome: 'failed', nextAttemptAt: null, status: 410 });
  });
});
