import type { TestClockScope } from '@deals/kernel';
import type { FastifyRequest } from 'fastify';

export interface PartnerRef {
  id: string;
  name: string;
  role: 'partner' | 'auditor';
  /** The partner's own request budget; null: the service's default. */
  requestsPerMinute: number | null;
  /** false: a sandbox's test credentials (the partner id is the sandbox's). */
  livemode: boolean;
  /** The credential the request presented: the API key's id, or `password` (v3); absent for a user's access token. */
  credentialId?: string;
}

/** A user's temporary access token (deprecated), as a request presents it. */
export interface UserTokenRef {
  userId: string;
  /** Resource names, or `all`. */
  scope: string[] | 'all';
  access: Array<'read' | 'write'>;
  expiresAt: string;
}

/** Looks partners (and users' access tokens) up by their credentials; implemented by accounts. */
export abstract class CredentialVerifier {
  /** The key's partner; null for an unknown key; throws `Unauthorized` saying so for a revoked or expired one. */
  abstract byApiKey(apiKey: string): Promise<PartnerRef | null>;
  /**
   * The scope of a call made under one of the sandbox's test clocks (`Deals-Test-Clock`): refused
   * for live credentials, a clock of another sandbox or none, and for a write while it advances.
   */
  abstract testClock(partner: PartnerRef, clockId: string, writes: boolean): Promise<TestClockScope>;
  /** Likewise for a v3 username and password (a replaced password works until its grace period ends). */
  abstract byUsernameAndPassword(username: string, password: string): Promise<PartnerRef | null>;
  /** The token and the partner it belongs to; null when unknown (expiry is checked by the caller). */
  abstract byAccessToken(tokenId: string): Promise<{ partner: PartnerRef; token: UserTokenRef } | null>;
}

export type AuthenticatedRequest = FastifyRequest & { partner?: PartnerRef; userToken?: UserTokenRef; testClock?: TestClockScope };
