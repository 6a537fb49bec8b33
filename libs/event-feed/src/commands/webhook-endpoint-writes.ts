import {
  Clock,
  EventStore,
  handleCommand,
  HandleOptions,
  IdGenerator,
  loadCachedAggregate,
  LogPosition,
  PartnerCaller,
  ServiceUnavailable,
  ValidationFailed,
  ViewProgress,
} from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { checkWebhookUrl } from '../delivery/webhook-url';
import {
  EndpointPlaces,
  MAX_ENDPOINTS,
  placeOutcome,
  webhookEndpointPlacesDecider,
} from '../domain/webhook-endpoint/webhook-endpoint-places.decider';
import { webhookEndpointDecider, WebhookEndpointCommand } from '../domain/webhook-endpoint/webhook-endpoint.decider';
import type { EndpointTerms } from '../domain/webhook-endpoint/webhook-endpoint.events';
import { webhookEndpointPlacesStream, webhookEndpointStream } from '../domain/webhook-endpoint/webhook-endpoint.events';
import { WEBHOOK_ENDPOINTS } from '../projections/webhook-endpoints/webhook-endpoints.projection';
import { WebhookEndpointQueries } from '../queries/webhook-endpoint.queries';
import { WebhookSettings } from './webhook-settings';

/**
 * A partner's writes to its webhook endpoints: each checked, then decided on the endpoint's stream.
 * How many it has is decided on its places stream: a new endpoint takes a place there first and is
 * made after; a deleted one is deleted first and frees its place after. A process stopping between
 * the two leaves a place held by no live endpoint (never a live endpoint without a place), which
 * the next registration finding the partner full frees (`freeLostPlaces`).
 */
@Injectable()
export class WebhookEndpointWrites {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly settings: WebhookSettings,
    private readonly endpoints: WebhookEndpointQueries,
    private readonly progress: ViewProgress,
  ) {}

  async create(
    terms: EndpointTerms & { enabled: boolean },
    caller: PartnerCaller,
  ): Promise<{ endpointId: string; position: LogPosition | null }> {
    await this.checkUrl(terms.url);
    const endpointId = `we_${this.ids.short()}`;
    await this.takePlace(endpointId, caller);
    try {
      const position = await this.run(
        endpointId,
        { type: 'CreateWebhookEndpoint', data: { endpointId, partnerId: caller.partnerId, ...terms, secretSalt: salt() } },
        caller,
        { freshStream: true },
      );
      return { endpointId, position };
    } catch (error) {
      // Its place back at once, unless it was made after all; if this fails too, `freeLostPlaces` frees it later.
      await this.release(endpointId, caller).catch(() => undefined);
      throw error;
    }
  }

  async update(
    endpointId: string,
    changes: Partial<EndpointTerms> & { enabled?: boolean },
    caller: PartnerCaller,
  ): Promise<LogPosition | null> {
    if (changes.url !== undefined) await this.checkUrl(changes.url);
    return this.run(endpointId, { type: 'UpdateWebhookEndpoint', data: { endpointId, partnerId: caller.partnerId, ...changes } }, caller);
  }

  async delete(endpointId: string, caller: PartnerCaller): Promise<LogPosition | null> {
    const position = await this.run(
      endpointId,
      { type: 'DeleteWebhookEndpoint', data: { endpointId, partnerId: caller.partnerId } },
      caller,
    );
    await this.freePlace(endpointId, caller);
    return position;
  }

  rotateSecret(endpointId: string, caller: PartnerCaller): Promise<LogPosition | null> {
    return this.run(
      endpointId,
      { type: 'RotateWebhookSecret', data: { endpointId, partnerId: caller.partnerId, secretSalt: salt() } },
      caller,
    );
  }

  redeliver(endpointId: string, eventIds: string[], caller: PartnerCaller): Promise<LogPosition | null> {
    return this.run(endpointId, { type: 'RequestRedelivery', data: { endpointId, partnerId: caller.partnerId, eventIds } }, caller);
  }

  /**
   * Takes a place for a new endpoint on the partner's places stream, or refuses at the limit. The
   * stream's first decision counts the endpoints made before places were kept; a full partner's
   * lost places are freed first.
   */
  private async takePlace(endpointId: string, caller: PartnerCaller): Promise<void> {
    const streamId = webhookEndpointPlacesStream(caller.partnerId);
    const places = (await loadCachedAggregate(this.store, streamId, webhookEndpointPlacesDecider)).state;
    const earlier = places.counted ? null : await this.earlierEndpoints(caller.partnerId);
    if (places.held.size >= MAX_ENDPOINTS) await this.freeLostPlaces(places, caller);
    await handleCommand(
      this.store,
      streamId,
      webhookEndpointPlacesDecider,
      { type: 'TakeEndpointPlace', data: { partnerId: caller.partnerId, endpointId, earlier } },
      { now: this.clock.now(), metadata: caller },
    );
  }

  /**
   * The partner's live endpoints, from the view once it has applied the log up to its head: all
   * those made before places were kept, since every endpoint made since holds a place before it is
   * made (so none is made outside the log this head closes). Counted once, by the places stream's
   * first decision, which ignores this list if another decision counted first.
   */
  private async earlierEndpoints(partnerId: string): Promise<string[]> {
    const head = await this.store.head();
    // Shown: applied up to the head, which a checkpoint need not say when the last events are none of the view's.
    if (!(await this.progress.shows(WEBHOOK_ENDPOINTS, head)))
      throw new ServiceUnavailable(`the partner's webhook endpoints cannot be counted yet: their view is behind the log`, 1);
    return (await this.endpoints.ofPartner(partnerId)).map((endpoint) => endpoint._id);
  }

  /**
   * Frees the places whose freeing a stopped process left undone: those of deleted endpoints, and
   * those of endpoints still not made long after their place was taken, once abandoned on their
   * own stream (so that the creation cannot finish after its place is gone).
   */
  private async freeLostPlaces(places: EndpointPlaces, caller: PartnerCaller): Promise<void> {
    const now = this.clock.now();
    await Promise.all(
      [...places.held].map(async ([endpointId, takenAt]) => {
        const endpoint = (await loadCachedAggregate(this.store, webhookEndpointStream(endpointId), webhookEndpointDecider)).state;
        const outcome = placeOutcome(endpoint, takenAt, now);
        if (outcome === 'free') await this.freePlace(endpointId, caller);
        else if (outcome === 'abandon') await this.release(endpointId, caller);
      }),
    );
  }

  /** Abandons an endpoint not made yet, then frees its place; keeps the place of one made meanwhile. */
  private async release(endpointId: string, caller: PartnerCaller): Promise<void> {
    const { state } = await handleCommand(
      this.store,
      webhookEndpointStream(endpointId),
      webhookEndpointDecider,
      { type: 'AbandonWebhookEndpoint', data: { endpointId, partnerId: caller.partnerId } },
      { now: this.clock.now(), metadata: caller },
    );
    if (state.status === 'abandoned') await this.freePlace(endpointId, caller);
  }

  private async freePlace(endpointId: string, caller: PartnerCaller): Promise<void> {
    await handleCommand(
      this.store,
      webhookEndpointPlacesStream(caller.partnerId),
      webhookEndpointPlacesDecider,
      { type: 'FreeEndpointPlace', data: { partnerId: caller.partnerId, endpointId } },
      { now: this.clock.now(), metadata: caller },
    );
  }

  private async run(
    endpointId: string,
    command: WebhookEndpointCommand,
    caller: PartnerCaller,
    options?: HandleOptions,
  ): Promise<LogPosition | null> {
    const { position } = await handleCommand(
      this.store,
      webhookEndpointStream(endpointId),
      webhookEndpointDecider,
      command,
      { now: this.clock.now(), metadata: caller },
      options,
    );
    return position;
  }

  private async checkUrl(url: string): Promise<void> {
    const refusal = await checkWebhookUrl(url, this.settings.allowPrivateAddresses);
    if (refusal) throw new ValidationFailed([{ type: 'invalid', resource: 'webhook_endpoint', field: 'url', message: refusal }]);
  }
}

/** A new secret's salt: the secret itself is derived from it (`WebhookSecrets`) and never recorded. */
const salt = () => randomBytes(18).toString('base64url');
