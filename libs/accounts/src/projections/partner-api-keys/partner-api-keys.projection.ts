import { defineProjection, ViewDocument } from '@deals/kernel';
import { INITIAL_KEY_ID, PartnerEvent } from '../../domain/partner/partner.events';

/** "Whose key is this, and does it still work?" One document a key, by the SHA-256 hash of the key. */
export interface PartnerApiKeyView extends ViewDocument {
  partnerId: string;
  keyId: string;
  name: string;
  /** The key's first characters, shown to tell keys apart; null for keys made before prefixes were kept. */
  prefix: string | null;
  issuedAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

export const PARTNER_API_KEYS = 'partner_keys';

export const partnerApiKeysProjection = defineProjection<PartnerApiKeyView>({
  name: PARTNER_API_KEYS,
  handles: ['PartnerRegistered', 'PartnerApiKeyIssued', 'PartnerApiKeyExpirySet', 'PartnerApiKeyRevoked', 'PartnerApiKeyRenamed'],
  // A few documents a partner, one read by every request.
  keepInMemory: true,
  indexes: [{ keys: { partnerId: 1 } }],
  documentIds: (event) => {
    const data = event.data as { apiKeyHash?: string; keyHash?: string };
    return [data.keyHash ?? data.apiKeyHash!];
  },
  evolve(view, recorded, documentId) {
    const event = recorded as unknown as PartnerEvent;
    switch (event.type) {
      case 'PartnerRegistered': {
        const { partnerId, apiKeyId, apiKeyPrefix, issuedAt } = event.data;
        const at = issuedAt ?? recorded.metadata.occurredAt;
        const key = { partnerId, keyId: apiKeyId ?? INITIAL_KEY_ID, name: 'first key', prefix: apiKeyPrefix ?? null };
        return { _id: documentId, _pos: recorded.position, ...key, issuedAt: at, expiresAt: null, revokedAt: null };
      }
      case 'PartnerApiKeyIssued': {
        const { partnerId, keyId, name, prefix, issuedAt } = event.data;
        return { _id: documentId, _pos: recorded.position, partnerId, keyId, name, prefix, issuedAt, expiresAt: null, revokedAt: null };
      }
      case 'PartnerApiKeyExpirySet':
        return view && { ...view, _pos: recorded.position, expiresAt: event.data.expiresAt };
      case 'PartnerApiKeyRevoked':
        return view && { ...view, _pos: recorded.position, revokedAt: event.data.revokedAt };
      case 'PartnerApiKeyRenamed':
        return view && { ...view, _pos: recorded.position, name: event.data.name };
      default:
        return null;
    }
  },
});
