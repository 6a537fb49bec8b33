import type { DomainEvent } from '@deals/kernel';

export const PARTNER_ROLES = ['partner', 'auditor'] as const;
export type PartnerRole = (typeof PARTNER_ROLES)[number];

/** Credentials are kept only as SHA-256 hashes: they are service-made 192-bit random secrets. */
export type PartnerRegistered = DomainEvent<
  'PartnerRegistered',
  {
    partnerId: string;
    name: string;
    role: PartnerRole;
    apiKeyHash: string;
    /** The first key's id and shown prefix; absent on partners registered before keys had them (id `initial`). */
    apiKeyId?: string;
    apiKeyPrefix?: string;
    username: string;
    passwordHash: string;
    /** The partner's request budget; absent: the service's default (`RATE_LIMIT_PER_MINUTE`). */
    requestsPerMinute?: number;
    /** When the credentials were made (absent on older events: the event's time). */
    issuedAt?: string;
    /** The live partner whose sandbox this account is (the account's id is that id with `_test` after it); absent: a live account. */
    sandboxOf?: string;
  }
>;

/** An operator changed the partner's request budget; null: back to the service's default. */
export type PartnerRateLimitChanged = DomainEvent<'PartnerRateLimitChanged', { partnerId: string; requestsPerMinute: number | null }>;

/**
 * The partner set how long after a coupon's redemption it may be rolled back, in hours (0: never);
 * null: back to the service's default.
 */
export type PartnerRollbackWindowChanged = DomainEvent<'PartnerRollbackWindowChanged', { partnerId: string; hours: number | null }>;

/** Every key event names its key by id and by hash (the views find a key by the hash of what a request presents). */
interface KeyRef {
  partnerId: string;
  keyId: string;
  keyHash: string;
}

/** A new API key for the partner (by rotation, or one more key beside the others). */
export type PartnerApiKeyIssued = DomainEvent<'PartnerApiKeyIssued', KeyRef & { name: string; prefix: string; issuedAt: string }>;

/** A key stops working at `expiresAt` (a rotation's old key; `expiresAt` at or before the event: at once). */
export type PartnerApiKeyExpirySet = DomainEvent<'PartnerApiKeyExpirySet', KeyRef & { expiresAt: string }>;

export type PartnerApiKeyRevoked = DomainEvent<'PartnerApiKeyRevoked', KeyRef & { revokedAt: string }>;

export type PartnerApiKeyRenamed = DomainEvent<'PartnerApiKeyRenamed', KeyRef & { name: string }>;

/** A new v3 password; the one it replaces keeps working until `previousExpiresAt`. */
export type PartnerPasswordRotated = DomainEvent<
  'PartnerPasswordRotated',
  { partnerId: string; passwordHash: string; issuedAt: string; previousExpiresAt: string }
>;

export type PartnerKeyEvent = PartnerApiKeyIssued | PartnerApiKeyExpirySet | PartnerApiKeyRevoked | PartnerApiKeyRenamed;

export type PartnerEvent =
  PartnerRegistered | PartnerRateLimitChanged | PartnerRollbackWindowChanged | PartnerKeyEvent | PartnerPasswordRotated;

/** How long a redemption may be rolled back when the partner set nothing, and the longest it may set. */
export const DEFAULT_ROLLBACK_WINDOW_HOURS = 24;
export const MAX_ROLLBACK_WINDOW_HOURS = 720;

export const partnerStream = (partnerId: string) => `partner-${partnerId}`;

/** The id of a partner's first key on events written before keys had ids. */
export const INITIAL_KEY_ID = 'initial';
