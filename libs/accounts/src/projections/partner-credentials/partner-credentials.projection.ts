import { defineProjection, ViewDocument } from '@deals/kernel';
import type { PartnerEvent, PartnerRole } from '../../domain/partner/partner.events';

/** "Which partner holds this API key, or this username?" Hashes only, and the partner's request budget. */
export interface PartnerCredentials extends ViewDocument {
  name: string;
  role: PartnerRole;
  apiKeyHash: string;
  username: string;
  passwordHash: string;
  /** null: the service's default budget. */
  requestsPerMinute: number | null;
}

export const PARTNER_CREDENTIALS = 'partner_credentials';

export const partnerCredentialsProjection = defineProjection<PartnerCredentials>({
  name: PARTNER_CREDENTIALS,
  handles: ['PartnerRegistered', 'PartnerRateLimitChanged'],
  // One document a partner, read by every request: held in memory by the embedded store.
  keepInMemory: true,
  indexes: [
    { keys: { apiKeyHash: 1 }, unique: true },
    { keys: { username: 1 }, unique: true },
  ],
  documentIds: (event) => [(event.data as { partnerId: string }).partnerId],
  evolve(view, recorded) {
    const event = recorded as unknown as PartnerEvent;
    if (event.type === 'PartnerRateLimitChanged')
      return view && { ...view, _pos: recorded.position, requestsPerMinute: event.data.requestsPerMinute };
    const { partnerId, name, role, apiKeyHash, username, passwordHash, requestsPerMinute } = event.data;
    return {
      _id: partnerId,
      _pos: recorded.position,
      name,
      role,
      apiKeyHash,
      username,
      passwordHash,
      requestsPerMinute: requestsPerMinute ?? null,
    };
  },
});
