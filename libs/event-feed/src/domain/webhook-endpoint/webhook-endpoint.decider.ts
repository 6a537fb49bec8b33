import { Decider, DomainCommand, ignoredEvent, NotFound, unknownCommand } from '@deals/kernel';
import type { EndpointTerms, WebhookEndpointEvent } from './webhook-endpoint.events';

/** How long a rotated secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000;
/** An endpoint whose every delivery failed this long is disabled. */
export const FAILING_DISABLES_AFTER_MS = 5 * 24 * 3_600_000;

/** An endpoint's stream: none yet, abandoned before it was made (it never will be), live, or deleted. */
export type WebhookEndpoint = { status: 'none' | 'abandoned' | 'deleted' } | LiveEndpoint;

export interface LiveEndpoint {
  status: 'live';
  partnerId: string;
  terms: EndpointTerms;
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

/** The partner's live endpoint; not found once deleted, or before it is made. */
function live(state: WebhookEndpoint, partnerId: string): LiveEndpoint {
  if (state.status !== 'live' || state.partnerId !== partnerId) throw new NotFound('webhook endpoint not found');
  return state;
}

/**
 * A partner's webhook endpoint: where to send which events, enabled or not, and its signing
 * secret (a salt; see the events). Disabled by the service when its receiver answers 410 Gone or
 * fails for five days; enabled again by its partner. Made only once it holds a place on its
 * partner's places stream (`webhookEndpointPlacesDecider`); a place whose endpoint was never made
 * is freed only after the endpoint is abandoned here, so that it can no longer be made.
 */
export const webhookEndpointDecider: Decider<WebhookEndpoint, WebhookEndpointCommand, WebhookEndpointEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state, now) {
    const at = now.toISOString();
    const { endpointId, partnerId } = command.data;
    switch (command.type) {
      case 'CreateWebhookEndpoint': {
        // Its place was freed: made now, it would be counted nowhere.
        if (state.status === 'abandoned') throw new Error(`webhook endpoint ${endpointId} was abandoned before it was made`);
        if (state.status !== 'none') return [];
        const { url, description, types, enabled, secretSalt } = command.data;
        return [
          { type: 'WebhookEndpointCreated', data: { endpointId, partnerId, url, description, types, enabled, secretSalt, createdAt: at } },
        ];
      }
      case 'AbandonWebhookEndpoint':
        return state.status === 'none' ? [{ type: 'WebhookEndpointAbandoned', data: { endpointId, partnerId, at } }] : [];
      case 'UpdateWebhookEndpoint': {
        live(state, partnerId);
        const { url, description, types, enabled } = command.data;
        return [{ type: 'WebhookEndpointUpdated', data: { endpointId, partnerId, url, description, types, enabled } }];
      }
      case 'DeleteWebhookEndpoint':
        live(state, partnerId);
        return [{ type: 'WebhookEndpointDeleted', data: { endpointId, partnerId, deletedAt: at } }];
      case 'RotateWebhookSecret': {
        live(state, partnerId);
        const previousUntil = new Date(now.getTime() + PREVIOUS_SECRET_MS).toISOString();
        return [{ type: 'WebhookSecretRotated', data: { endpointId, partnerId, secretSalt: command.data.secretSalt, previousUntil } }];
      }
      case 'DisableWebhookEndpoint':
        return live(state, partnerId).enabled
          ? [{ type: 'WebhookEndpointDisabled', data: { endpointId, partnerId, reason: command.data.reason, at } }]
          : [];
      case 'RecordEndpointFailure':
        return live(state, partnerId).failingSince === null
          ? [{ type: 'WebhookEndpointFailing', data: { endpointId, partnerId, since: at } }]
          : [];
      case 'RecordEndpointSuccess':
        return live(state, partnerId).failingSince !== null
          ? [{ type: 'WebhookEndpointRecovered', data: { endpointId, partnerId, at } }]
          : [];
      case 'RequestRedelivery':
        live(state, partnerId);
        return [{ type: 'WebhookRedeliveryRequested', data: { endpointId, partnerId, eventIds: command.data.eventIds, requestedAt: at } }];
      default:
        return unknownCommand(command);
    }
  },
  evolve(state, event) {
    // Made or abandoned once, from none; every other event follows the making (the decider writes no other).
    if (event.type === 'WebhookEndpointCreated') {
      const { partnerId, url, description, types, enabled } = event.data;
      return state.status === 'none'
        ? { status: 'live', partnerId, terms: { url, description, types }, enabled, failingSince: null }
        : state;
    }
    if (event.type === 'WebhookEndpointAbandoned') return state.status === 'none' ? { status: 'abandoned' } : state;
    if (state.status !== 'live') return state;
    switch (event.type) {
      case 'WebhookEndpointUpdated': {
        const { url, description, types, enabled } = event.data;
        const terms = {
          ...state.terms,
          ...(url === undefined ? {} : { url }),
          ...(description === undefined ? {} : { description }),
          ...(types === undefined ? {} : { types }),
        };
        // Enabled again by its partner: its failures so far no longer count.
        const reenabled = enabled === true && !state.enabled;
        return { ...state, terms, enabled: enabled ?? state.enabled, failingSince: reenabled ? null : state.failingSince };
      }
      case 'WebhookEndpointDeleted':
        return { status: 'deleted' };
      case 'WebhookEndpointDisabled':
        return { ...state, enabled: false };
      case 'WebhookEndpointFailing':
        return { ...state, failingSince: event.data.since };
      case 'WebhookEndpointRecovered':
        return { ...state, failingSince: null };
      case 'WebhookSecretRotated':
      case 'WebhookRedeliveryRequested':
        // The secret and the redeliveries are read from the events by the view and the deliveries, not decided on.
        return state;
      default:
        return ignoredEvent(event, state);
    }
  },
};
