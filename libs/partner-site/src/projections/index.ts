import { memberSessionsProjection } from './member-sessions/member-sessions.projection';
import { partnerMembersProjection } from './partner-members/partner-members.projection';

/** Every projection the partner site owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const partnerSiteProjections = [partnerMembersProjection, memberSessionsProjection];
