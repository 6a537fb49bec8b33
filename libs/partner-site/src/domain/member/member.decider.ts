import { Decider, DomainCommand, NotFound, Unauthorized, ValidationFailed } from '@deals/kernel';
import { SESSION_IDLE_MS } from './member-rules';
import {
  InvitationRefusal,
  MemberEvent,
  MemberInvited,
  MemberReauthenticationFailed,
  MemberSignedIn,
  MemberSignInFailed,
  MemberSignedUp,
  MemberTotpEnrolled,
  SignInFailure,
} from './member.events';

export type InviteMember = DomainCommand<'InviteMember', Omit<MemberInvited['data'], 'invitedAt'>>;
export type SignUpMember = DomainCommand<'SignUpMember', { memberId: string; inviteHash: string; passwordHash: string }>;
/** A sign-up link naming the member was opened or posted: a dead one is recorded, a live one changes nothing. */
export type PresentInvitation = DomainCommand<'PresentInvitation', { memberId: string; inviteHash: string; address: string }>;
/**
 * A sign-in attempt, its credentials already checked by the handler (scrypt and the TOTP check are
 * slow or read a secret): `passwordMatches`, and `totpStep`, the time step the code matched (null:
 * no code, or a wrong one).
 */
export type SignInMember = DomainCommand<
  'SignInMember',
  Pick<MemberSignedIn['data'], 'memberId' | 'sessionHash' | 'expiresAt' | 'address'> & { passwordMatches: boolean; totpStep: number | null }
>;
export type RefreshMemberSession = DomainCommand<'RefreshMemberSession', { memberId: string; sessionHash: string }>;
export type SignOutMember = DomainCommand<'SignOutMember', { memberId: string; sessionHash: string }>;
export type SignOutEverywhere = DomainCommand<'SignOutEverywhere', { memberId: string }>;
export type RemoveMember = DomainCommand<'RemoveMember', { memberId: string }>;
/**
 * Turning on the second factor, the password asked again and checked by the handler:
 * `passwordMatches`, and `totpStep`, the time step the new secret's code matched (null: none).
 */
export type EnrolMemberTotp = DomainCommand<
  'EnrolMemberTotp',
  Pick<MemberTotpEnrolled['data'], 'memberId' | 'sealedSecret'> & { totpStep: number | null; passwordMatches: boolean; address: string }
>;

export type MemberCommand =
  | InviteMember
  | SignUpMember
  | PresentInvitation
  | SignInMember
  | RefreshMemberSession
  | SignOutMember
  | SignOutEverywhere
  | EnrolMemberTotp
  | RemoveMember;

export interface LiveSession {
  expiresAt: string;
  lastSeenAt: string;
}

export interface Member {
  /** `removed`: an operator took the person's access away (they may be invited again). */
  status: 'none' | 'invited' | 'active' | 'removed';
  partnerId: string | null;
  email: string | null;
  inviteHash: string | null;
  inviteExpiresAt: string | null;
  passwordHash: string | null;
  sealedTotpSecret: string | null;
  /** The last TOTP time step a code was accepted for: a code is good once. */
  lastTotpStep: number;
  /** Sessions not signed out, by hash (those past their end are dropped at the next sign-in). */
  sessions: Record<string, LiveSession>;
}

/** Whether a session is still good at `now`: known, before its end, and used within the idle time. */
export function sessionIsLive(session: LiveSession | undefined, now: Date): session is LiveSession {
  if (!session) return false;
  const at = now.getTime();
  return Date.parse(session.expiresAt) > at && Date.parse(session.lastSeenAt) + SESSION_IDLE_MS > at;
}

/** Why a sign-up link with this secret's hash cannot sign the member up at `now`; null while it can. */
export function invitationRefusal(member: Member, inviteHash: string, now: Date): InvitationRefusal | null {
  if (member.status !== 'invited' || member.inviteHash === null || inviteHash !== member.inviteHash) return 'secret';
  return Date.parse(member.inviteExpiresAt!) <= now.getTime() ? 'expired' : null;
}

/** Whether the member has an invitation that can still sign them up at `now`: invited, not signed up, not expired. */
export function invitationIsLive(member: Member, now: Date): boolean {
  return member.status === 'invited' && member.inviteHash !== null && Date.parse(member.inviteExpiresAt!) > now.getTime();
}

/** Refused before the password is checked: the answer tells nothing of the password. */
export const totpSetUpAlready = () =>
  new ValidationFailed([{ type: 'invalid', resource: 'member', field: 'totp', message: 'is set up already' }]);

const used = (message: string) => new ValidationFailed([{ type: 'invalid', resource: 'invitation', field: 'token', message }]);

function signIn(member: Member, data: SignInMember['data'], now: Date): Array<MemberSignedIn | MemberSignInFailed> {
  const { memberId, sessionHash, expiresAt, address, passwordMatches, totpStep } = data;
  const at = now.toISOString();
  const partnerId = member.partnerId!;
  const failed = (reason: SignInFailure): MemberSignInFailed[] => [
    { type: 'MemberSignInFailed', data: { memberId, partnerId, reason, address, failedAt: at } },
  ];
  if (member.status !== 'active') return failed('not-signed-up');
  if (!passwordMatches) return failed('password');
  if (member.sealedTotpSecret !== null) {
    if (totpStep === null) return failed('code');
    if (totpStep <= member.lastTotpStep) return failed('code-reused');
  }
  const step = member.sealedTotpSecret !== null ? totpStep : null;
  return [{ type: 'MemberSignedIn', data: { memberId, partnerId, sessionHash, signedInAt: at, expiresAt, address, totpStep: step } }];
}

function enrolTotp(member: Member, data: EnrolMemberTotp['data'], now: Date): Array<MemberTotpEnrolled | MemberReauthenticationFailed> {
  if (member.status !== 'active') throw new NotFound('no such member');
  if (member.sealedTotpSecret !== null) throw totpSetUpAlready();
  const { memberId, sealedSecret, totpStep, passwordMatches, address } = data;
  const partnerId = member.partnerId!;
  const at = now.toISOString();
  if (!passwordMatches || totpStep === null) {
    const reason = passwordMatches ? 'code' : 'password';
    return [
      { type: 'MemberReauthenticationFailed', data: { memberId, partnerId, purpose: 'totp-enrolment', reason, address, failedAt: at } },
    ];
  }
  return [{ type: 'MemberTotpEnrolled', data: { memberId, partnerId, sealedSecret, totpStep, enrolledAt: at } }];
}

export const memberDecider: Decider<Member, MemberCommand, MemberEvent> = {
  initialState: () => ({
    status: 'none',
    partnerId: null,
    email: null,
    inviteHash: null,
    inviteExpiresAt: null,
    passwordHash: null,
    sealedTotpSecret: null,
    lastTotpStep: -1,
    sessions: {},
  }),

  decide(command, member, now) {
    const at = now.toISOString();
    if (command.type === 'InviteMember') {
      const { partnerId } = command.data;
      if (member.status === 'active') throw used('is for an email that has signed up already');
      if (member.partnerId !== null && member.partnerId !== partnerId) throw used('is for an email invited by another partner');
      return [{ type: 'MemberInvited', data: { ...command.data, invitedAt: at } }];
    }
    if (member.status === 'none') throw new NotFound('no such member');
    const { memberId } = command.data;
    switch (command.type) {
      case 'SignUpMember': {
        if (member.status === 'active') throw used('this invitation has been used: sign in instead');
        if (command.data.inviteHash !== member.inviteHash) throw used('this invitation has been replaced by a newer one');
        if (Date.parse(member.inviteExpiresAt!) <= now.getTime()) throw used('this invitation has expired: ask for a new one');
        const data: MemberSignedUp['data'] = {
          memberId,
          partnerId: member.partnerId!,
          passwordHash: command.data.passwordHash,
          signedUpAt: at,
        };
        return [{ type: 'MemberSignedUp', data }];
      }
      case 'PresentInvitation': {
        const { inviteHash, address } = command.data;
        const reason = invitationRefusal(member, inviteHash, now);
        if (reason === null) return [];
        return [{ type: 'MemberInvitationRefused', data: { memberId, partnerId: member.partnerId!, reason, address, refusedAt: at } }];
      }
      case 'SignInMember':
        return signIn(member, command.data, now);
      case 'RefreshMemberSession': {
        const { sessionHash } = command.data;
        if (!sessionIsLive(member.sessions[sessionHash], now)) throw new Unauthorized('the session has ended');
        return [{ type: 'MemberSessionRefreshed', data: { memberId, sessionHash, seenAt: at } }];
      }
      case 'SignOutMember': {
        const { sessionHash } = command.data;
        if (!member.sessions[sessionHash]) return [];
        return [{ type: 'MemberSignedOut', data: { memberId, sessionHash, signedOutAt: at } }];
      }
      case 'SignOutEverywhere': {
        const sessionHashes = Object.keys(member.sessions).filter((hash) => Date.parse(member.sessions[hash].expiresAt) > now.getTime());
        return [{ type: 'MemberSignedOutEverywhere', data: { memberId, partnerId: member.partnerId!, sessionHashes, signedOutAt: at } }];
      }
      case 'RemoveMember': {
        if (member.status === 'removed') return [];
        // Every session the stream knows, ended or not by this clock: the views end each one.
        const sessionHashes = Object.keys(member.sessions);
        return [{ type: 'MemberRemoved', data: { memberId, partnerId: member.partnerId!, sessionHashes, signedOutAt: at } }];
      }
      case 'EnrolMemberTotp':
        return enrolTotp(member, command.data, now);
    }
  },

  evolve(member, event) {
    switch (event.type) {
      case 'MemberInvited': {
        const { partnerId, email, inviteHash, expiresAt } = event.data;
        return { ...member, status: 'invited', partnerId, email, inviteHash, inviteExpiresAt: expiresAt };
      }
      case 'MemberSignedUp':
        return { ...member, status: 'active', passwordHash: event.data.passwordHash, inviteHash: null };
      case 'MemberSignedIn': {
        const { sessionHash, signedInAt, expiresAt, totpStep } = event.data;
        const sessions: Record<string, LiveSession> = {};
        for (const [hash, session] of Object.entries(member.sessions))
          if (Date.parse(session.expiresAt) > Date.parse(signedInAt)) sessions[hash] = session;
        sessions[sessionHash] = { expiresAt, lastSeenAt: signedInAt };
        return { ...member, sessions, lastTotpStep: totpStep ?? member.lastTotpStep };
      }
      case 'MemberSessionRefreshed': {
        const session = member.sessions[event.data.sessionHash];
        if (!session) return member;
        return { ...member, sessions: { ...member.sessions, [event.data.sessionHash]: { ...session, lastSeenAt: event.data.seenAt } } };
      }
      case 'MemberSignedOut': {
        const { [event.data.sessionHash]: _ended, ...sessions } = member.sessions;
        return { ...member, sessions };
      }
      case 'MemberSignedOutEverywhere': {
        const sessions = { ...member.sessions };
        for (const hash of event.data.sessionHashes) delete sessions[hash];
        return { ...member, sessions };
      }
      case 'MemberTotpEnrolled':
        return { ...member, sealedTotpSecret: event.data.sealedSecret, lastTotpStep: Math.max(member.lastTotpStep, event.data.totpStep) };
      case 'MemberSignInFailed':
      case 'MemberReauthenticationFailed':
      case 'MemberInvitationRefused':
        return member;
      case 'MemberRemoved':
        return { ...member, status: 'removed', inviteHash: null, passwordHash: null, sealedTotpSecret: null, sessions: {} };
    }
  },
};
