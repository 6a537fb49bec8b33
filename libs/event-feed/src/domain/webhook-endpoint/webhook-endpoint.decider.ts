import { Decider, DomainCommand, NotFound } from '@deals/kernel';
import type { EndpointTerms, WebhookEndpointEvent } from './webhook-endpoint.events';

/** How long a rotated secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000;
/** An endpoint whose every delivery failed this long is disabled. */
export const FAILING_DISABLES_AFTER_MS = 5 * 24 * 3_600_000;

export interface WebhookEndpoint {
  exists: boolean;
  deleted: boolean;
  /** Given up before it was made: it never will be. */
  abandoned: boolean;
  partnerId: string | null;
  terms: EndpointTerms | null;
  enabled: boolean;
  failingSince: string | null;
}

type Of = { endpointId: string; partnerId: string };
export type WebhookEndpointCommand =
  | DomainCommand<'CreateWebhookEndpoint', Of & EndpointTerms & { enabled: boolean; secretSalt: string }>
  | DomainCommand<'UpdateWebhookEndpoint', Of & Partial<EndpointTerms> & { enabled?: boolean }>
  | DomainCommand<'DeleteWebhookEndpoint', Of>
  | DomainCommand<'RotateWebhookSecret', Of & { secretSalt: string }>
  | DomainCommand<'DisableWebhookEndpoint', Of & { reason: 'gone' | 'failing' }>
  | DomainCommand<'RecordEndpointFailure', Of>
  | DomainCommand<'RecordEndpointSuccess', Of>
  | DomainCommand<'RequestRedelivery', Of & { eventIds: string[] }>
  | DomainCommand<'AbandonWebhookEndpoint', Of>;

/** The endpoint takes up one of its partner's places: from its place's taking to its deletion, or its abandonment before it was made. */
export const holdsPlace = (endpoint: WebhookEndpoint) => !endpoint.deleted && !endpoint.abandoned;

/**
 * A partner's webhook endpoint: where to send which events, enabled or not, and its signing
 * secret (a salt; see the events). Disabled by the service when its receiver answers 410 Gone or
 * fails for five days; enabled again by its partner. Made only once it holds a place on its
 * partner's places stream (`webhookEndpointPlacesDecider`); a place whose endpoint was never made
 * is freed only after the endpoint is abandoned here, so that it can no longer be made.
 */
export const webhookEndpointDecider: Decider<WebhookEndpoint, WebhookEndpointCommand, WebhookEndpointEvent> = {
  initialState: () => ({
    exists: false,
    deleted: false,
    abandoned: false,
    partnerId: null,
    terms: null,
    enabled: false,
    failingSince: null,
  }),
  decide(command, state, now) {
    const at = now.toISOString();
    const { endpointId, partnerId } = command.data;
    if (command.type === 'CreateWebhookEndpoint') {
      // Its place was freed: made now, it would be counted nowhere.
      if (state.abandoned) throw new Error(`webhook endpoint ${endpointId} was abandoned before it was made`);
      if (state.exists) return [];
      const { url, description, types, enabled, secretSalt } = command.data;
      return [
        { type: 'WebhookEndpointCreated', data: { endpointId, partnerId, url, description, types, enabled, secretSalt, createdAt: at } },
      ];
    }
    if (command.type === 'AbandonWebhookEndpoint')
      return state.exists || state.abandoned ? [] : [{ type: 'WebhookEndpointAbandoned', data: { endpointId, partnerId, at } }];
    if (!state.exists || state.deleted || state.partnerId !== partnerId) throw new NotFound('webhook endpoint not found');
    switch (command.type) {
      case 'UpdateWebhookEndpoint': {
        const { url, description, types, enabled } = command.data;
        return [{ type: 'WebhookEndpointUpdated', data: { endpointId, partnerId, url, description, types, enabled } }];
      }
      case 'DeleteWebhookEndpoint':
        return [{ type: 'WebhookEndpointDeleted', data: { endpointId, partnerId, deletedAt: at } }];
      case 'RotateWebhookSecret':
        return [
          {
            type: 'WebhookSecretRotated',
            data: {
              endpointId,
              partnerId,
              secretSalt: command.data.secretSalt,
              previousUntil: new Date(now.getTime() + PREVIOUS_SECRET_MS).toISOString(),
            },
          },
        ];
      case 'DisableWebhookEndpoint':
        return state.enabled ? [{ type: 'WebhookEndpointDisabled', data: { endpointId, partnerId, reason: command.data.reason, at } }] : [];
      case 'RecordEndpointFailure':
        return state.failingSince === null ? [{ type: 'WebhookEndpointFailing', data: { endpointId, partnerId, since: at } }] : [];
      case 'RecordEndpointSuccess':
        return state.failingSince !== null ? [{ type: 'WebhookEndpointRecovered', data: { endpointId, partnerId, at } }] : [];
      case 'RequestRedelivery':
        return [{ type: 'WebhookRedeliveryRequested', data: { endpointId, partnerId, eventIds: command.data.eventIds, requestedAt: at } }];
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookEndpointCreated': {
        const { partnerId, url, description, types, enabled } = event.data;
        return { ...state, exists: true, partnerId, terms: { url, description, types }, enabled };
      }
      case 'WebhookEndpointUpdated': {
        const { url, description, types, enabled } = event.data;
        const terms = {
          ...state.terms!,
          ...(url === undefined ? {} : { url }),
          ...(description === undefined ? {} : { description }),
          ...(types === undefined ? {} : { types }),
        };
        // Enabled again by its partner: its failures so far no longer count.
        const reenabled = enabled === true && !state.enabled;
        return { ...state, terms, enabled: enabled ?? state.enabled, failingSince: reenabled ? null : state.failingSince };
      }
      case 'WebhookEndpointDeleted':
        return { ...state, deleted: true, enabled: false };
      case 'WebhookEndpointDisabled':
        return { ...state, enabled: false };
      case 'WebhookEndpointFailing':
        return { ...state, failingSince: event.data.since };
      case 'WebhookEndpointRecovered':
        return { ...state, failingSince: null };
      case 'WebhookEndpointAbandoned':
        return { ...state, abandoned: true };
      default:
        return state;
    }
  },
};
