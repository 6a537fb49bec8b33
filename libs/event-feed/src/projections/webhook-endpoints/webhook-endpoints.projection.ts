import { defineProjection, ViewDocument } from '@deals/kernel';
import type { WebhookEndpointEvent } from '../../domain/webhook-endpoint/webhook-endpoint.events';

/** "Which webhook endpoints has partner P, and how is endpoint W signed?" */
export interface WebhookEndpointView extends ViewDocument {
  partnerId: string;
  url: string;
  description: string;
  types: string[];
  enabled: boolean;
  /** Why the service disabled it, while it stays disabled. */
  disabledReason: 'gone' | 'failing' | null;
  /** The secrets' salts that sign now: the newest first; an older one until its `until`. */
  salts: Array<{ salt: string; until: string | null }>;
  failingSince: string | null;
  createdAt: string;
  deleted: boolean;
}

export const WEBHOOK_ENDPOINTS = 'webhook_endpoints';

export const webhookEndpointsProjection = defineProjection<WebhookEndpointView>({
  name: WEBHOOK_ENDPOINTS,
  handles: [
    'WebhookEndpointCreated',
    'WebhookEndpointUpdated',
    'WebhookEndpointDeleted',
    'WebhookSecretRotated',
    'WebhookEndpointDisabled',
    'WebhookEndpointFailing',
    'WebhookEndpointRecovered',
  ],
  indexes: [{ keys: { partnerId: 1 } }],
  documentIds: (event) => [(event.data as { endpointId: string }).endpointId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as WebhookEndpointEvent;
    if (event.type === 'WebhookEndpointCreated') {
      const { partnerId, url, description, types, enabled, secretSalt, createdAt } = event.data;
      return {
        _id: id,
        _pos: recorded.position,
        partnerId,
        url,
        description,
        types,
        enabled,
        disabledReason: null,
        salts: [{ salt: secretSalt, until: null }],
        failingSince: null,
        createdAt,
        deleted: false,
      };
    }
    if (!view) return null;
    switch (event.type) {
      case 'WebhookEndpointUpdated': {
        const { url, description, types, enabled } = event.data;
        const reenabled = enabled === true && !view.enabled;
        return {
          ...view,
          url: url ?? view.url,
          description: description ?? view.description,
          types: types ?? view.types,
          enabled: enabled ?? view.enabled,
          disabledReason: enabled === true ? null : view.disabledReason,
          failingSince: reenabled ? null : view.failingSince,
        };
      }
      case 'WebhookEndpointDeleted':
        return { ...view, deleted: true, enabled: false };
      case 'WebhookSecretRotated':
        // The newest salt first; the one it replaces signs until `previousUntil`; older ones are over by then.
        return {
          ...view,
          salts: [
            { salt: event.data.secretSalt, until: null },
            { salt: view.salts[0].salt, until: event.data.previousUntil },
          ],
        };
      case 'WebhookEndpointDisabled':
        return { ...view, enabled: false, disabledReason: event.data.reason };
      case 'WebhookEndpointFailing':
        return { ...view, failingSince: event.data.since };
      case 'WebhookEndpointRecovered':
        return { ...view, failingSince: null };
      default:
        return null;
    }
  },
});
