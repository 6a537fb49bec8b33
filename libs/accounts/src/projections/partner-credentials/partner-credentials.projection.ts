import { defineProjection, ViewDocument } from '@deals/kernel';
import type { PartnerEvent, PartnerRole } from '../../domain/partner/partner.events';

/** "Which partner holds this API key, or this username?" Hashes only. */
export interface PartnerCredentials extends ViewDocument {
  name: string;
  role: PartnerRole;
  apiKeyHash: string;
  username: string;
  passwordHash: string;
}

export const PARTNER_CREDENTIALS = 'partner_credentials';

export const partnerCredentialsProjection = defineProjection<PartnerCredentials>({
  name: PARTNER_CREDENTIALS,
  handles: ['PartnerRegistered'],
  indexes: [
    { keys: { apiKeyHash: 1 }, unique: true },
    { keys: { username: 1 }, unique: true },
  ],
  documentIds: (event) => [(event.data as { partnerId: string }).partnerId],
  evolve(_view, recorded) {
    const { partnerId, name, role, apiKeyHash, username, passwordHash } = (recorded as unknown as PartnerEvent).data;
    return { _id: partnerId, _pos: recorded.position, name, role, apiKeyHash, username, passwordHash };
  },
});
