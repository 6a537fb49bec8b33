import type { DomainEvent } from '@deals/kernel';

export const PARTNER_ROLES = ['partner', 'auditor'] as const;
export type PartnerRole = (typeof PARTNER_ROLES)[number];

/** Credentials are kept only as SHA-256 hashes: they are service-made 192-bit random secrets. */
export type PartnerRegistered = DomainEvent<
  'PartnerRegistered',
  { partnerId: string; name: string; role: PartnerRole; apiKeyHash: string; username: string; passwordHash: string }
>;

export type PartnerEvent = PartnerRegistered;

export const partnerStream = (partnerId: string) => `partner-${partnerId}`;
