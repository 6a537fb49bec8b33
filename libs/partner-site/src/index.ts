/** The partner site: pages under /partner where the people of a partner manage its keys and look up its records. */
export { PartnerSiteHttpModule, PartnerSiteModule } from './partner-site.module';
export { RemoveMember } from './commands/member.commands';
export { InviteMember, SignUpMember } from './commands/member-invitation.commands';
export { SignInMember } from './commands/member-sign-in.commands';
export { SiteSecrets } from './commands/site-secrets';
export { MemberNoticeRecipients } from './commands/member-notice-recipients';
export { MemberAddresses } from './commands/member-addresses';
export { serveSite, SITE_PREFIX, SITE_POLICY, SESSION_COOKIE } from './http/site-http';
export { answerRefusalPage } from './http/site-request';
export type { SiteDependencies } from './http/site-http';
export { SitePages } from './http/site-pages';
export { MemberSessions } from './http/member-sessions';
export { MEMBER_EVENT_TYPES, memberStream } from './domain/member/member.events';
/** Where the site's events keep a member's personal data (encrypted in the log under the member's key). */
export { PARTNER_SITE_PERSONAL_FIELDS } from './domain/member/member-personal-data';
export type { MemberEvent } from './domain/member/member.events';
export { PARTNER_MEMBERS } from './projections/partner-members/partner-members.projection';
export type { PartnerMember } from './projections/partner-members/partner-members.projection';
export { MEMBER_SESSIONS } from './projections/member-sessions/member-sessions.projection';

export { partnerSiteProjections } from './projections';
