import type { PartnerRef } from '@deals/wire';
import type { FastifyRequest } from 'fastify';
import type { SignedInMember } from './member-sessions';

/** What the site's hooks learned of a request: its member (null for a visitor) and the CSRF token its forms carry. */
export interface SiteState {
  member: SignedInMember | null;
  partner: PartnerRef | null;
  csrfToken: string;
}

export type SiteRequest = FastifyRequest & { site?: SiteState; partner?: PartnerRef };
