import { Clock, CommandCaller, EventStore, handleCommand, IdGenerator, LogPosition, ValidationFailed } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { checkWebhookUrl } from '../delivery/webhook-url';
import { webhookEndpointDecider, WebhookEndpointCommand } from '../domain/webhook-endpoint/webhook-endpoint.decider';
import type { EndpointTerms } from '../domain/webhook-endpoint/webhook-endpoint.events';
import { webhookEndpointStream } from '../domain/webhook-endpoint/webhook-endpoint.events';
import { WebhookSettings } from './webhook-settings';

type Caller = CommandCaller & { partnerId: string };

/** A partner's endpoints at most (Stripe's limit). */
export const MAX_ENDPOINTS = 16;

/** A partner's writes to its webhook endpoints: each checked, then decided on the endpoint's stream. */
@Injectable()
export class WebhookEndpointWrites {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly settings: WebhookSettings,
  ) {}

  async create(
    terms: EndpointTerms & { enabled: boolean },
    caller: Caller,
    existing: number,
  ): Promise<{ endpointId: string; position: LogPosition | null }> {
    if (existing >= MAX_ENDPOINTS)
      throw new ValidationFailed([
        { type: 'invalid', resource: 'webhook_endpoint', field: 'url', message: `a partner has at most ${MAX_ENDPOINTS} endpoints` },
      ]);
    await this.checkUrl(terms.url);
    const endpointId = `we_${this.ids.short()}`;
    const position = await this.run(
      endpointId,
      { type: 'CreateWebhookEndpoint', data: { endpointId, partnerId: caller.partnerId, ...terms, secretSalt: salt() } },
      caller,
    );
    return { endpointId, position };
  }

  async update(endpointId: string, changes: Partial<EndpointTerms> & { enabled?: boolean }, caller: Caller): Promise<LogPosition | null> {
    if (changes.url !== undefined) await this.checkUrl(changes.url);
    return this.run(endpointId, { type: 'UpdateWebhookEndpoint', data: { endpointId, partnerId: caller.partnerId, ...changes } }, caller);
  }

  delete(endpointId: string, caller: Caller): Promise<LogPosition | null> {
    return this.run(endpointId, { type: 'DeleteWebhookEndpoint', data: { endpointId, partnerId: caller.partnerId } }, caller);
  }

  rotateSecret(endpointId: string, caller: Caller): Promise<LogPosition | null> {
    return this.run(
      endpointId,
      { type: 'RotateWebhookSecret', data: { endpointId, partnerId: caller.partnerId, secretSalt: salt() } },
      caller,
    );
  }

  redeliver(endpointId: string, eventIds: string[], caller: Caller): Promise<LogPosition | null> {
    return this.run(endpointId, { type: 'RequestRedelivery', data: { endpointId, partnerId: caller.partnerId, eventIds } }, caller);
  }

  private async run(endpointId: string, command: WebhookEndpointCommand, caller: Caller): Promise<LogPosition | null> {
    const { position } = await handleCommand(this.store, webhookEndpointStream(endpointId), webhookEndpointDecider, command, {
      now: this.clock.now(),
      metadata: caller,
    });
    return position;
  }

  private async checkUrl(url: string): Promise<void> {
    const refusal = await checkWebhookUrl(url, this.settings.allowPrivateAddresses);
    if (refusal) throw new ValidationFailed([{ type: 'invalid', resource: 'webhook_endpoint', field: 'url', message: refusal }]);
  }
}

/** A new secret's salt: the secret itself is derived from it (`WebhookSecrets`) and never recorded. */
const salt = () => randomBytes(18).toString('base64url');
