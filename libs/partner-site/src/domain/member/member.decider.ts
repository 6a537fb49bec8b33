import { Decider, DomainCommand, ignoredEvent, NotFound, Unauthorized, unknownCommand, ValidationFailed } from '@deals/kernel';
import { SESSION_IDLE_MS } from './member-rules';
import {
  InvitationRefusal,
  MemberEvent,
  MemberInvited,
  MemberReauthenticationFailed,
  MemberSignedIn,
  MemberSignInFailed,
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

/** A member's stream: no one yet, or a person invited, signed up (active), or removed (they may be invited again). */
export type Member = { status: 'none' } | InvitedMember | ActiveMember | RemovedMember;
export type KnownMember = InvitedMember | ActiveMember | RemovedMember;

interface MemberRecord {
  partnerId: string;
  email: string;
  /** The last TOTP time step a code was accepted for: a code is good once. */
  lastTotpStep: number;
}

export interface InvitedMember extends MemberRecord {
  status: 'invited';
  inviteHash: string;
  inviteExpiresAt: string;
}

export interface ActiveMember extends MemberRecord {
  status: 'active';
  passwordHash: string;
  sealedTotpSecret: string | null;
  /** Sessions not signed out, by hash (those past their end are dropped at the next sign-in). */
  sessions: Record<string, LiveSession>;
}

/** An operator took the person's access away. */
export interface RemovedMember extends MemberRecord {
  status: 'removed';
}

/** What any member the stream knows holds, whatever their status. */
const recordOf = ({ partnerId, email, lastTotpStep }: KnownMember): MemberRecord => ({ partnerId, email, lastTotpStep });

/** The member's sessions: only an active member has any. */
const sessionsOf = (member: Member): Record<string, LiveSession> => (member.status === 'active' ? member.sessions : {});

/** Whether a session is still good at `now`: known, before its end, and used within the idle time. */
export function sessionIsLive(session: LiveSession | undefined, now: Date): session is LiveSession {
  if (!session) return false;
  const at = now.getTime();
  return Date.parse(session.expiresAt) > at && Date.parse(session.lastSeenAt) + SESSION_IDLE_MS > at;
}

/** Why a sign-up link with this secret's hash cannot sign the member up at `now`; null while it can. */
export function invitationRefusal(member: Member, inviteHash: string, now: Date): InvitationRefusal | null {
  if (member.status !== 'invited' || inviteHash !== member.inviteHash) return 'secret';
  return Date.parse(member.inviteExpiresAt) <= now.getTime() ? 'expired' : null;
}

/** Whether the member has an invitation that can still sign them up at `now`: invited, not signed up, not expired. */
export function invitationIsLive(member: Member, now: Date): boolean {
  return member.status === 'invited' && Date.parse(member.inviteExpiresAt) > now.getTime();
}

/** Refused before the password is checked: the answer tells nothing of the password. */
export const totpSetUpAlready = () =>
  new ValidationFailed([{ type: 'invalid', resource: 'member', field: 'totp', message: 'is set up already' }]);

const used = (message: string) => new ValidationFailed([{ type: 'invalid', resource: 'invitation', field: 'token', message }]);

function signIn(member: KnownMember, data: SignInMember['data'], now: Date): Array<MemberSignedIn | MemberSignInFailed> {
  const { memberId, sessionHash, expiresAt, address, passwordMatches, totpStep } = data;
  const at = now.toISOString();
  const { partnerId } = member;
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

function enrolTotp(
  member: KnownMember,
  data: EnrolMemberTotp['data'],
  now: Date,
): Array<MemberTotpEnrolled | MemberReauthenticationFailed> {
  if (member.status !== 'active') throw new NotFound('no such member');
  if (member.sealedTotpSecret !== null) throw totpSetUpAlready();
  const { memberId, sealedSecret, totpStep, passwordMatches, address } = data;
  const { partnerId } = member;
  const at = now.toISOString();
  if (!passwordMatches || totpStep === null) {
    const reason = passwordMatches ? 'code' : 'password';
    return [
      { type: 'MemberReauthenticationFailed', data: { memberId, partnerId, purpose: 'totp-enrolment', reason, address, failedAt: at } },
    ];
  }
  return [{ type: 'MemberTotpEnrolled', data: { memberId, partnerId, sealedSecret, totpStep, enrolledAt: at } }];
}

/** A sign-up with the member's current invitation, before it expires. */
function signUp({ data }: SignUpMember, member: KnownMember, now: Date): MemberEvent[] {
  if (member.status === 'active') throw used('this invitation has been used: sign in instead');
  if (member.status !== 'invited' || data.inviteHash !== member.inviteHash) throw used('this invitation has been replaced by a newer one');
  if (Date.parse(member.inviteExpiresAt) <= now.getTime()) throw used('this invitation has expired: ask for a new one');
  const { memberId, passwordHash } = data;
  return [{ type: 'MemberSignedUp', data: { memberId, partnerId: member.partnerId, passwordHash, signedUpAt: now.toISOString() } }];
}

/** Refused for no one the stream knows: every command but an invitation is about a member invited once. */
function known(member: Member): KnownMember {
  if (member.status === 'none') throw new NotFound('no such member');
  return member;
}

/** The events of an active member's sessions and second factor. */
function evolveActive(member: ActiveMember, event: MemberEvent): ActiveMember {
  switch (event.type) {
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
    default:
      return member;
  }
}

export const memberDecider: Decider<Member, MemberCommand, MemberEvent> = {
  initialState: () => ({ status: 'none' }),

  decide(command, member, now) {
    const at = now.toISOString();
    const { memberId } = command.data;
    switch (command.type) {
      case 'InviteMember': {
        const { partnerId } = command.data;
        if (member.status === 'active') throw used('is for an email that has signed up already');
        if (member.status !== 'none' && member.partnerId !== partnerId) throw used('is for an email invited by another partner');
        return [{ type: 'MemberInvited', data: { ...command.data, invitedAt: at } }];
      }
      case 'SignUpMember':
        return signUp(command, known(member), now);
      case 'PresentInvitation': {
        const { inviteHash, address } = command.data;
        const { partnerId } = known(member);
        const reason = invitationRefusal(member, inviteHash, now);
        if (reason === null) return [];
        return [{ type: 'MemberInvitationRefused', data: { memberId, partnerId, reason, address, refusedAt: at } }];
      }
      case 'SignInMember':
        return signIn(known(member), command.data, now);
      case 'RefreshMemberSession': {
        const { sessionHash } = command.data;
        if (!sessionIsLive(sessionsOf(known(member))[sessionHash], now)) throw new Unauthorized('the session has ended');
        return [{ type: 'MemberSessionRefreshed', data: { memberId, sessionHash, seenAt: at } }];
      }
      case 'SignOutMember': {
        const { sessionHash } = command.data;
        if (!sessionsOf(known(member))[sessionHash]) return [];
        return [{ type: 'MemberSignedOut', data: { memberId, sessionHash, signedOutAt: at } }];
      }
      case 'SignOutEverywhere': {
        const { partnerId } = known(member);
        const sessions = sessionsOf(member);
        const sessionHashes = Object.keys(sessions).filter((hash) => Date.parse(sessions[hash].expiresAt) > now.getTime());
        return [{ type: 'MemberSignedOutEverywhere', data: { memberId, partnerId, sessionHashes, signedOutAt: at } }];
      }
      case 'RemoveMember': {
        const { partnerId, status } = known(member);
        if (status === 'removed') return [];
        // Every session the stream knows, ended or not by this clock: the views end each one.
        const sessionHashes = Object.keys(sessionsOf(member));
        return [{ type: 'MemberRemoved', data: { memberId, partnerId, sessionHashes, signedOutAt: at } }];
      }
      case 'EnrolMemberTotp':
        return enrolTotp(known(member), command.data, now);
      default:
        return unknownCommand(command);
    }
  },

  evolve(member, event) {
    if (event.type === 'MemberInvited') {
      const { partnerId, email, inviteHash, expiresAt } = event.data;
      const lastTotpStep = member.status === 'none' ? -1 : member.lastTotpStep;
      return { status: 'invited', partnerId, email, lastTotpStep, inviteHash, inviteExpiresAt: expiresAt };
    }
    // Every other event follows an invitation (one before it is none the decider wrote, and is ignored).
    if (member.status === 'none') return member;
    switch (event.type) {
      case 'MemberSignedUp':
        return { ...recordOf(member), status: 'active', passwordHash: event.data.passwordHash, sealedTotpSecret: null, sessions: {} };
      case 'MemberSignedIn':
      case 'MemberSessionRefreshed':
      case 'MemberSignedOut':
      case 'MemberSignedOutEverywhere':
      case 'MemberTotpEnrolled':
        return member.status === 'active' ? evolveActive(member, event) : member;
      case 'MemberSignInFailed':
      case 'MemberReauthenticationFailed':
      case 'MemberInvitationRefused':
        return member;
      case 'MemberRemoved':
        return { ...recordOf(member), status: 'removed' };
      default:
        return ignoredEvent(event, member);
    }
  },
};
