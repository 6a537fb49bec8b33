import {
  Clock,
  CommandCaller,
  EventStore,
  currentTestClock,
  fold,
  handleCommand,
  inTestClock,
  loadCachedAggregate,
  Mailer,
  realClockOf,
  Scheduler,
  testClockDecider,
  testClockOf,
  testClockStream,
  ViewDocument,
  ViewProgress,
} from '@deals/kernel';
import { Injectable, Logger } from '@nestjs/common';
import { WebhookSettings } from '../commands/webhook-settings';
import { WebhookSender } from '../delivery/webhook-sender';
import { WebhookSecrets } from '../delivery/webhook-secrets';
import { webhookHeaders } from '../delivery/webhook-signature';
import { AttemptAlreadyRecorded, webhookDeliveryDecider } from '../domain/webhook-delivery/webhook-delivery.decider';
import { WebhookDeliveryEvent, webhookDeliveryStream } from '../domain/webhook-delivery/webhook-delivery.events';
import {
  FAILING_DISABLES_AFTER_MS,
  webhookEndpointDecider,
  WebhookEndpointCommand,
} from '../domain/webhook-endpoint/webhook-endpoint.decider';
import { webhookEndpointStream } from '../domain/webhook-endpoint/webhook-endpoint.events';
import { FeedRenderer } from '../http/feed-renderer';
import { EVENT_FEED } from '../projections/event-feed/event-feed.projection';
import type { WebhookDelivery } from '../projections/event-feed/feed-documents';
import type { WebhookEndpointView } from '../projections/webhook-endpoints/webhook-endpoints.projection';
import { EventFeedQueries } from '../queries/event-feed.queries';
import { WebhookEndpointQueries } from '../queries/webhook-endpoint.queries';
import { WebhookNoticeRecipients } from './webhook-notice-recipients';

export const DELIVER_WEBHOOK_JOB = 'deliver-webhook';
const REARM_PAGE = 500;
const SYSTEM: CommandCaller = { actor: 'system' };

/**
 * Sends the feed's deliveries: each attempt is a job (timers embedded, BullMQ distributed), armed
 * when the feed commits a pending delivery and again for every pending one when a job-running
 * process starts or takes the feed over from another, so a crash loses none; each attempt's outcome is recorded once on the delivery's
 * stream, and the next armed by the schedule. A receiver answering 410 Gone disables its endpoint;
 * one that fails every delivery for 5 days is disabled and its partner's people told by email.
 *
 * A test clock's deliveries keep its time: the first attempt goes at once in real time, recorded at
 * the clock's instant, and each retry waits on the clock, sent when an advance passes its due time.
 * What is about the sending itself (the signature's timestamp, an endpoint failing) is real time.
 */
@Injectable()
export class DeliverWebhooks {
  private readonly logger = new Logger('Webhooks');
  /** Real time, for what is about the sending itself, whatever clock a delivery keeps. */
  private readonly realClock: Clock;

  constructor(
    private readonly scheduler: Scheduler,
    progress: ViewProgress,
    private readonly feed: EventFeedQueries,
    private readonly endpoints: WebhookEndpointQueries,
    private readonly renderer: FeedRenderer,
    private readonly secrets: WebhookSecrets,
    private readonly sender: WebhookSender,
    private readonly settings: WebhookSettings,
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly mailer: Mailer,
    private readonly recipients: WebhookNoticeRecipients,
  ) {
    this.realClock = realClockOf(clock);
    this.scheduler.handle(DELIVER_WEBHOOK_JOB, (job) => this.attempt(String(job.data.deliveryId), Number(job.data.attempt)));
    progress.onCommitted(EVENT_FEED, (documents) => {
      for (const doc of documents) if (isPending(doc)) void this.arm(doc);
    });
    // The feed taken over from a worker that stopped: what it committed and armed no job for.
    progress.onAdopted(EVENT_FEED, () => {
      this.rearm().catch((error) => this.logger.error(`pending deliveries not armed again after taking over the feed: ${String(error)}`));
    });
  }

  /** Arms the next attempt of every pending delivery (called when a job-running process starts). */
  async rearm(): Promise<void> {
    let after: string | null = null;
    for (;;) {
      const page = await this.feed.pendingDeliveries(REARM_PAGE, after);
      for (const delivery of page) await this.arm(delivery);
      if (page.length < REARM_PAGE) return;
      after = page[page.length - 1].order;
    }
  }

  private async arm(delivery: WebhookDelivery): Promise<void> {
    const attempt = delivery.attempts.length + 1;
    const clockId = testClockOf(delivery.partnerId);
    const job = {
      id: `webhook-${delivery._id}-${attempt}`,
      kind: DELIVER_WEBHOOK_JOB,
      runAt: new Date(delivery.nextAttemptAt ?? delivery.createdAt),
      data: { deliveryId: delivery._id, attempt },
    };
    try {
      if (clockId === null) await this.scheduler.schedule(job);
      // A test clock's first attempt goes now, in real time (its events are dated in the clock's time).
      else if (attempt === 1) await this.scheduler.schedule({ ...job, runAt: this.realClock.now() });
      else {
        const { state } = await loadCachedAggregate(this.store, testClockStream(clockId), testClockDecider);
        // Its retries wait on the clock (armed once: a start re-arms only what the clock does not hold);
        // a deleted clock runs none, so the delivery ends here.
        if (state.deleted) await this.record(delivery, attempt, clockDeleted(job.runAt));
        else if (!state.pending.has(job.id))
          await inTestClock({ clockId, partnerId: delivery.partnerId, at: job.runAt }, () => this.scheduler.schedule(job));
      }
    } catch (error) {
      // Armed again at the next start (the delivery stays pending in the view).
      this.logger.error(`delivery ${delivery._id}: attempt ${attempt} not armed: ${String(error)}`);
    }
  }

  /** One attempt: sent, then recorded once; nothing when it was recorded already. */
  async attempt(deliveryId: string, attempt: number): Promise<void> {
    const delivery = await this.feed.delivery(deliveryId);
    if (!delivery || delivery.status !== 'pending' || delivery.attempts.length >= attempt) return;
    const clockId = testClockOf(delivery.partnerId);
    if (clockId === null || currentTestClock()) return this.attemptNow(delivery, attempt);
    // A test clock's first attempt, run in real time: recorded at the clock's instant (where it
    // stands, or the event's own while an advance runs).
    const { state } = await loadCachedAggregate(this.store, testClockStream(clockId), testClockDecider);
    const at = new Date(Math.max(Date.parse(delivery.createdAt), Date.parse(state.frozenTime ?? delivery.createdAt)));
    if (state.deleted) {
      await this.record(delivery, attempt, clockDeleted(at));
      return;
    }
    return inTestClock({ clockId, partnerId: delivery.partnerId, at }, () => this.attemptNow(delivery, attempt));
  }

  private async attemptNow(delivery: WebhookDelivery, attempt: number): Promise<void> {
    const deliveryId = delivery._id;
    // The view may not show an attempt made a moment ago: armed again by another worker's commit,
    // or by a start's re-arming, the job runs again before the feed applies its record. The
    // delivery's stream says for sure.
    const made = fold(webhookDeliveryDecider, (await this.store.readStream(webhookDeliveryStream(deliveryId))) as WebhookDeliveryEvent[]);
    if (made.finished || made.attempts >= attempt) return;
    const endpoint = await this.endpoints.byId(delivery.endpointId);
    const event = await this.feed.event(delivery.partnerId, delivery.eventId);
    // The attempt's time (a test clock's, for its deliveries) and the sending's.
    const now = this.clock.now();
    const sentAt = this.realClock.now();
    if (!endpoint || !endpoint.enabled || !event) {
      const why =
        !endpoint || endpoint.deleted
          ? 'the endpoint was removed'
          : !endpoint.enabled
            ? 'the endpoint is disabled'
            : 'the event is not in the feed';
      await this.record(delivery, attempt, {
        at: now,
        status: null,
        latencyMs: 0,
        responseExcerpt: '',
        error: why,
        succeeded: false,
        final: true,
      });
      return;
    }
    const body = JSON.stringify(await this.renderer.render(event));
    const headers = webhookHeaders(
      this.secrets.signing(endpoint._id, endpoint.salts, sentAt),
      event._id,
      Math.floor(sentAt.getTime() / 1000),
      body,
    );
    const sent = await this.sender.send({ url: endpoint.url, headers, body });
    const recorded = await this.record(delivery, attempt, {
      at: now,
      ...sent,
      succeeded: sent.outcome === 'succeeded',
      final: sent.outcome === 'gone',
    });
    if (!recorded) return;
    // A success only matters to an endpoint failing (as its view says: one the view shows a moment late is told by the next).
    if (sent.outcome === 'succeeded') {
      if (endpoint.failingSince !== null) await this.endpointCommand(endpoint, { type: 'RecordEndpointSuccess' });
    } else if (sent.outcome === 'gone') await this.endpointCommand(endpoint, { type: 'DisableWebhookEndpoint', reason: 'gone' });
    else await this.failed(endpoint, sentAt);
  }

  private async record(
    delivery: WebhookDelivery,
    attempt: number,
    outcome: {
      at: Date;
      status: number | null;
      latencyMs: number;
      responseExcerpt: string;
      error: string | null;
      succeeded: boolean;
      final: boolean;
    },
  ): Promise<boolean> {
    try {
      await handleCommand(
        this.store,
        webhookDeliveryStream(delivery._id),
        webhookDeliveryDecider,
        {
          type: 'RecordAttempt',
          data: {
            deliveryId: delivery._id,
            endpointId: delivery.endpointId,
            eventId: delivery.eventId,
            partnerId: delivery.partnerId,
            attempt,
            at: outcome.at.toISOString(),
            status: outcome.status,
            latencyMs: Math.round(outcome.latencyMs),
            responseExcerpt: outcome.responseExcerpt,
            error: outcome.error,
            succeeded: outcome.succeeded,
            final: outcome.final,
            delaysMs: this.settings.retryDelaysMs,
          },
        },
        { now: this.clock.now(), metadata: { ...SYSTEM, partnerId: delivery.partnerId } },
      );
      return true;
    } catch (error) {
      if (error instanceof AttemptAlreadyRecorded) return false;
      throw error;
    }
  }

  /** A failure: the endpoint is failing from now, or, failing for 5 days, disabled and its partner told. */
  private async failed(endpoint: WebhookEndpointView, now: Date): Promise<void> {
    if (endpoint.failingSince === null) {
      await this.endpointCommand(endpoint, { type: 'RecordEndpointFailure' });
      return;
    }
    if (now.getTime() - Date.parse(endpoint.failingSince) < FAILING_DISABLES_AFTER_MS) return;
    const { events } = await this.endpointCommand(endpoint, { type: 'DisableWebhookEndpoint', reason: 'failing' });
    if (events.length) await this.tellPartner(endpoint, now);
  }

  private async endpointCommand(endpoint: WebhookEndpointView, command: { type: string; reason?: 'gone' | 'failing' }) {
    const data = { endpointId: endpoint._id, partnerId: endpoint.partnerId, ...(command.reason ? { reason: command.reason } : {}) };
    return handleCommand(
      this.store,
      webhookEndpointStream(endpoint._id),
      webhookEndpointDecider,
      { type: command.type, data } as WebhookEndpointCommand,
      {
        now: this.realClock.now(),
        metadata: { ...SYSTEM, partnerId: endpoint.partnerId },
      },
    );
  }

  /** Emails the partner's people (the partner site's) that the endpoint was disabled. */
  private async tellPartner(endpoint: WebhookEndpointView, now: Date): Promise<void> {
    const people = await this.recipients.of(endpoint.partnerId);
    const text =
      `Every delivery to your webhook endpoint ${endpoint.url} (${endpoint._id}) has failed since ${endpoint.failingSince}, ` +
      `so it was disabled on ${now.toISOString()}. No events are sent to it until it is enabled again ` +
      `(on the Webhooks page of the partner site, or PUT /v1/webhook_endpoints/${endpoint._id} with "enabled": true); events since can be sent again with POST /v1/webhook_endpoints/${endpoint._id}/replay.`;
    for (const person of people) {
      await this.mailer
        .send({
          to: person.email,
          subject: 'Your webhook endpoint was disabled',
          text,
          html: `<p>${escapeHtml(text)}</p>`,
          messageId: `<webhook-disabled-${endpoint._id}.${person.id}@deals-service>`,
        })
        .catch((error) =>
          this.logger.error(`the notice to ${person.id} of endpoint ${endpoint._id} disabled was not sent: ${String(error)}`),
        );
    }
  }
}

/** The last attempt of a deleted test clock's delivery: nothing sent. */
const clockDeleted = (at: Date) => ({
  at,
  status: null,
  latencyMs: 0,
  responseExcerpt: '',
  error: 'the test clock was deleted',
  succeeded: false,
  final: true,
});

const isPending = (doc: ViewDocument): doc is WebhookDelivery =>
  (doc as WebhookDelivery).kind === 'delivery' && (doc as WebhookDelivery).status === 'pending';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
