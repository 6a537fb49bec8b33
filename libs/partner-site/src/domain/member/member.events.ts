import type { DomainEvent } from '@deals/kernel';

/**
 * A person of a partner who signs in to the partner site. Secrets appear here only as hashes
 * (invite tokens, session ids: SHA-256 of 256 random bits; passwords: scrypt) or sealed (the TOTP
 * secret: AES-256-GCM under an installation secret).
 */

/** An operator invited the person; the link's token is known only by its hash. A new invite replaces an unused one. */
export type MemberInvited = DomainEvent<
  'MemberInvited',
  { memberId: string; partnerId: string; email: string; inviteHash: string; invitedAt: string; expiresAt: string }
>;

export type MemberSignedUp = DomainEvent<
  'MemberSignedUp',
  { memberId: string; partnerId: string; passwordHash: string; signedUpAt: string }
>;

/** A session began: its id is known only by its hash; it ends at `expiresAt` at the latest, or earlier when idle. */
export type MemberSignedIn = DomainEvent<
  'MemberSignedIn',
  {
    memberId: string;
    partnerId: string;
    sessionHash: string;
    signedInAt: string;
    expiresAt: string;
    address: string;
    /** The TOTP time step the code matched (a code is good once), or null without a second factor. */
    totpStep: number | null;
  }
>;

export const SIGN_IN_FAILURES = ['password', 'code', 'code-reused', 'not-signed-up'] as const;
export type SignInFailure = (typeof SIGN_IN_FAILURES)[number];

export type MemberSignInFailed = DomainEvent<
  'MemberSignInFailed',
  { memberId: string; partnerId: string; reason: SignInFailure; address: string; failedAt: string }
>;

/** What a signed-in person confirms with their password again. */
export const REAUTHENTICATION_PURPOSES = ['totp-enrolment'] as const;
export type ReauthenticationPurpose = (typeof REAUTHENTICATION_PURPOSES)[number];
/** `password`: not the member's; `code`: the password right and the code of the change not. The page tells neither. */
export const REAUTHENTICATION_FAILURES = ['password', 'code'] as const;
export type ReauthenticationFailure = (typeof REAUTHENTICATION_FAILURES)[number];

/** A signed-in session asked for a sensitive change and its password (or the change's code) was not accepted. */
export type MemberReauthenticationFailed = DomainEvent<
  'MemberReauthenticationFailed',
  {
    memberId: string;
    partnerId: string;
    purpose: ReauthenticationPurpose;
    reason: ReauthenticationFailure;
    address: string;
    failedAt: string;
  }
>;

/** `secret`: not the member's live invitation (used, replaced or made up); `expired`: the live one, past its end. */
export const INVITATION_REFUSALS = ['secret', 'expired'] as const;
export type InvitationRefusal = (typeof INVITATION_REFUSALS)[number];

/** A sign-up link naming this member was refused (answered as any dead link, whatever the reason). */
export type MemberInvitationRefused = DomainEvent<
  'MemberInvitationRefused',
  { memberId: string; partnerId: string; reason: InvitationRefusal; address: string; refusedAt: string }
>;

/** The session was used after a while: its idle time starts again from `seenAt`. */
export type MemberSessionRefreshed = DomainEvent<'MemberSessionRefreshed', { memberId: string; sessionHash: string; seenAt: string }>;

export type MemberSignedOut = DomainEvent<'MemberSignedOut', { memberId: string; sessionHash: string; signedOutAt: string }>;

/** Every live session ended at once (those listed). */
export type MemberSignedOutEverywhere = DomainEvent<
  'MemberSignedOutEverywhere',
  { memberId: string; partnerId: string; sessionHashes: string[]; signedOutAt: string }
>;

/** A second factor: `sealedSecret` is the TOTP secret sealed under the installation's key. */
export type MemberTotpEnrolled = DomainEvent<
  'MemberTotpEnrolled',
  { memberId: string; partnerId: string; sealedSecret: string; totpStep: number; enrolledAt: string }
>;

/** An operator took the person's access away: every live session ends (those listed), and so do their password and second factor. */
export type MemberRemoved = DomainEvent<
  'MemberRemoved',
  { memberId: string; partnerId: string; sessionHashes: string[]; signedOutAt: string }
>;

export type MemberEvent =
  | MemberRemoved
  | MemberInvited
  | MemberSignedUp
  | MemberSignedIn
  | MemberSignInFailed
  | MemberReauthenticationFailed
  | MemberInvitationRefused
  | MemberSessionRefreshed
  | MemberSignedOut
  | MemberSignedOutEverywhere
  | MemberTotpEnrolled;

export const MEMBER_EVENT_TYPES: ReadonlyArray<MemberEvent['type']> = [
  'MemberInvited',
  'MemberSignedUp',
  'MemberSignedIn',
  'MemberSignInFailed',
  'MemberReauthenticationFailed',
  'MemberInvitationRefused',
  'MemberSessionRefreshed',
  'MemberSignedOut',
  'MemberSignedOutEverywhere',
  'MemberTotpEnrolled',
  'MemberRemoved',
];

export const memberStream = (memberId: string) => `partnermember-${memberId}`;
