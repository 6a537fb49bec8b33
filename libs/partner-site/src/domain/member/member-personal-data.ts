import type { PersonalFields, PersonalFieldsOf } from '@deals/kernel';

/** Whose key encrypts a member's personal data in the log: prefixed, never a user's id. */
export const memberSubject = (memberId: string) => `member:${memberId}`;

const ofMember = (field: string): PersonalFieldsOf => ({
  owner: (data) => (typeof data.memberId === 'string' ? memberSubject(data.memberId) : null),
  paths: [[field]],
});

/**
 * Where the partner site's events keep a member's personal data, encrypted in the log under the
 * member's key: the email invited, and the network address of each sign-in and refusal.
 */
export const PARTNER_SITE_PERSONAL_FIELDS: PersonalFields = new Map([
  ['MemberInvited', ofMember('email')],
  ['MemberSignedIn', ofMember('address')],
  ['MemberSignInFailed', ofMember('address')],
  ['MemberReauthenticationFailed', ofMember('address')],
  ['MemberInvitationRefused', ofMember('address')],
]);
