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
    username: string;
    passwordHash: string;
    /** The partner's request budget; absent: the service's default (`RATE_LIMIT_PER_MINUTE`). */
    requestsPerMinute?: number;
  }
>;

/** An operator changed the partner's request budget; null: back to the service's default. */
export type PartnerRateLimitChanged = DomainEvent<'PartnerRateLimitChanged', { partnerId: string; requestsPerMinute: number | null }>;

export type PartnerEvent = PartnerRegistered | PartnerRateLimitChanged;

export const partnerStream = (partnerId: string) => `partner-${partnerId}`;
