import { defineProjection, ViewDocument } from '@deals/kernel';
import type { PartnerEvent, PartnerRole } from '../../domain/partner/partner.events';
import { PartnerPassword, passwordsAfterRotation } from '../../domain/partner/partner-credentials';

export type { PartnerPassword };

/** "Which partner is this, and which username and passwords does it sign v3 calls with?" Hashes only, and its budget. */
export interface PartnerAccount extends ViewDocument {
  name: string;
  role: PartnerRole;
  username: string;
  /** The current password first, then replaced ones still in their grace period. */
  passwords: PartnerPassword[];
  /** null: the service's default budget. */
  requestsPerMinute: number | null;
  /** Hours after a redemption it may be rolled back; null or absent: the default. */
  rollbackWindowHours?: number | null;
  registeredAt: string;
  /** The live partner whose sandbox this is; absent on a live account. */
  sandboxOf?: string;
}

export const PARTNER_ACCOUNTS = 'partner_accounts';

export const partnerAccountsProjection = defineProjection<PartnerAccount>({
  name: PARTNER_ACCOUNTS,
  handles: ['PartnerRegistered', 'PartnerRateLimitChanged', 'PartnerRollbackWindowChanged', 'PartnerPasswordRotated'],
  // One document a partner, read by every request: held in memory by the embedded store.
  keepInMemory: true,
  indexes: [{ keys: { username: 1 }, unique: true }],
  documentIds: (event) => [(event.data as { partnerId: string }).partnerId],
  evolve(view, recorded) {
    const event = recorded as unknown as PartnerEvent;
    if (event.type === 'PartnerRateLimitChanged')
      return view && { ...view, _pos: recorded.position, requestsPerMinute: event.data.requestsPerMinute };
    if (event.type === 'PartnerRollbackWindowChanged')
      return view && { ...view, _pos: recorded.position, rollbackWindowHours: event.data.hours };
    if (event.type === 'PartnerPasswordRotated') {
      if (!view) return null;
      const { passwordHash, issuedAt: rotatedAt, previousExpiresAt } = event.data;
      return {
        ...view,
        _pos: recorded.position,
        passwords: passwordsAfterRotation(view.passwords, { passwordHash, rotatedAt, previousExpiresAt }),
      };
    }
    if (event.type !== 'PartnerRegistered') return view;
    const { partnerId, name, role, username, passwordHash, requestsPerMinute, issuedAt, sandboxOf } = event.data;
    return {
      _id: partnerId,
      _pos: recorded.position,
      name,
      role,
      username,
      passwords: [{ hash: passwordHash, expiresAt: null }],
      requestsPerMinute: requestsPerMinute ?? null,
      registeredAt: issuedAt ?? recorded.metadata.occurredAt,
      ...(sandboxOf === undefined ? {} : { sandboxOf }),
    };
  },
});
