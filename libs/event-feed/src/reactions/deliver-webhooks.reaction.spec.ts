import { Clock, EventStore, ManualClock, Mailer, Scheduler, ViewProgress } from '@deals/kernel';
import { MemoryEventStore } from '@deals/testing';
import { WebhookSettings } from '../commands/webhook-settings';
import type { WebhookAttempt, WebhookSender } from '../delivery/webhook-sender';
import { WebhookSecrets } from '../delivery/webhook-secrets';
import { webhookDeliveryStream } from '../domain/webhook-delivery/webhook-delivery.events';
import { webhookEndpointStream } from '../domain/webhook-endpoint/webhook-endpoint.events';
import type { FeedRenderer } from '../http/feed-renderer';
import type { FeedEvent, WebhookDelivery } from '../projections/event-feed/event-feed.projection';
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
function deliverWebhooks() {
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
  const send = jest.fn(async () => succeeded);
  const reaction = new DeliverWebhooks(
    { handle: () => undefined } as unknown as Scheduler,
    { onCommitted: () => undefined } as unknown as ViewProgress,
    { delivery: async () => pending, event: async () => event } as unknown as EventFeedQueries,
    { byId: async () => endpoint } as unknown as WebhookEndpointQueries,
    { render: async (e: FeedEvent) => ({ id: e._id }) } as unknown as FeedRenderer,
    new WebhookSecrets(Buffer.alloc(32, 7)),
    { send } as unknown as WebhookSender,
    { allowPrivateAddresses: false, retryDelaysMs: [300], timeoutMs: 1000 } as WebhookSettings,
    store as EventStore,
    new ManualClock(new Date(AT)) as Clock,
    {} as Mailer,
    { of: async () => [] } as unknown as WebhookNoticeRecipients,
  );
  return { reaction, store, send };
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
});
