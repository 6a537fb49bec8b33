import { hashPassword, PARTNER_ACCOUNTS, verifyPassword } from '@deals/accounts';
import {
  Clock,
  CommandCaller,
  EventStore,
  FairSlots,
  handleCommand,
  invalid,
  isSandbox,
  LogPosition,
  NotFound,
  ValidationFailed,
  ValidationIssue,
  ViewDocument,
  ViewStore,
} from '@deals/kernel';
import { addressKey } from '@deals/wire';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { generateSecret, generateURI, verify } from 'otplib';
import { emailIssues, INVITE_LIFETIME_MS, normalEmail, passwordIssues, SESSION_LIFETIME_MS } from '../domain/member/member-rules';
import {
  invitationIsLive,
  invitationRefusal,
  Member,
  memberDecider,
  MemberCommand,
  totpSetUpAlready,
} from '../domain/member/member.decider';
import { memberStream, MemberSignInFailed, SignInFailure } from '../domain/member/member.events';
import { loadMember, memberIdFor } from './member-ids';
import { newSecret, seal, secretHash, SiteSecrets, unseal } from './site-secrets';

/** A hash no password matches, checked when the email is unknown, so that an answer takes as long either way. */
let decoy: Promise<string> | null = null;

const TOTP_ISSUER = 'Deals partner site';
/** Codes of the step before or after the current one are taken too (a clock a little off). */
const TOTP_TOLERANCE_S = 30;

const run = (store: EventStore, memberId: string, command: MemberCommand, now: Date, caller: CommandCaller) =>
  handleCommand(store, memberStream(memberId), memberDecider, command, { now, metadata: caller });

/** Invites a person to a partner's site; the result holds the invitation's token, its only copy. */
export class InviteMember extends Command<{
  memberId: string;
  email: string;
  token: string;
  expiresAt: string;
  position: LogPosition | null;
}> {
  constructor(
    readonly partnerId: string,
    readonly email: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(InviteMember)
export class InviteMemberHandler implements ICommandHandler<InviteMember> {
  constructor(
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly clock: Clock,
  ) {}

  async execute({ partnerId, email: given, caller }: InviteMember) {
    const issues = emailIssues(given);
    if (issues.length) throw new ValidationFailed(issues);
    const partner = await this.views.findById<ViewDocument & { role: string }>(PARTNER_ACCOUNTS, partnerId);
    if (!partner) throw new NotFound('partner not found');
    if (partner.role !== 'partner') throw invalid('partner', 'role', 'must be partner: auditors have no partner site');
    // People belong to the live partner and reach its sandbox in test mode.
    if (isSandbox(partnerId)) throw invalid('partner', 'id', "is a sandbox's: invite people to its live partner");
    const email = normalEmail(given);
    const memberId = await memberIdFor(this.store, given);
    const secret = newSecret();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + INVITE_LIFETIME_MS).toISOString();
    const { position } = await run(
      this.store,
      memberId,
      { type: 'InviteMember', data: { memberId, partnerId, email, inviteHash: secretHash(secret), expiresAt } },
      now,
      { ...caller, partnerId },
    );
    return { memberId, email, token: `${memberId}.${secret}`, expiresAt, position };
  }
}

/** The member an invitation token names, and the token's secret part; null for a token of another shape. */
export function invitationOf(token: string): { memberId: string; secret: string } | null {
  const match = /^([0-9a-f]{24})\.([A-Za-z0-9_-]{43})$/.exec(token);
  return match ? { memberId: match[1], secret: match[2] } : null;
}

/**
 * The member a sign-up link names, while the link can sign them up. A dead link naming a member
 * is recorded in that member's stream (`MemberInvitationRefused`); a link naming nobody makes no stream.
 */
async function liveInvitation(
  store: EventStore,
  token: string,
  address: string,
  now: Date,
  caller: Omit<CommandCaller, 'actor'>,
): Promise<{ memberId: string; inviteHash: string; member: Member } | null> {
  const invitation = invitationOf(token);
  const member = invitation && (await loadMember(store, invitation.memberId));
  if (!invitation || !member || member.status === 'none') return null;
  const { memberId } = invitation;
  const inviteHash = secretHash(invitation.secret);
  if (invitationRefusal(member, inviteHash, now) === null) return { memberId, inviteHash, member };
  await run(store, memberId, { type: 'PresentInvitation', data: { memberId, inviteHash, address } }, now, {
    ...caller,
    partnerId: member.partnerId!,
    actor: 'anonymous',
  });
  return null;
}

/**
 * Whether a member has an invitation that can still sign them up: only then do sign-up links naming
 * them count against their account in the throttle (a member who signed up has no link to guess).
 */
export class HasLiveInvitation extends Command<boolean> {
  constructor(readonly memberId: string) {
    super();
  }
}

@CommandHandler(HasLiveInvitation)
export class HasLiveInvitationHandler implements ICommandHandler<HasLiveInvitation> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ memberId }: HasLiveInvitation) {
    return invitationIsLive(await loadMember(this.store, memberId), this.clock.now());
  }
}

/** Opens a sign-up link (its page): whose it is while it works, null for any dead link (recorded when it names a member). */
export class OpenInvitation extends Command<{ memberId: string; email: string } | null> {
  constructor(
    readonly token: string,
    readonly address: string,
    readonly caller: Omit<CommandCaller, 'actor'>,
  ) {
    super();
  }
}

@CommandHandler(OpenInvitation)
export class OpenInvitationHandler implements ICommandHandler<OpenInvitation> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ token, address, caller }: OpenInvitation) {
    const live = await liveInvitation(this.store, token, address, this.clock.now(), caller);
    return live && { memberId: live.memberId, email: live.member.email! };
  }
}

export type SignUpOutcome =
  | { outcome: 'signed-up'; memberId: string; partnerId: string; email: string }
  /** The link works, the password chosen does not. */
  | { outcome: 'invalid'; email: string; issues: ValidationIssue[] }
  /** The link does not work, whatever the reason: the answer tells nothing of the member. */
  | { outcome: 'dead-link' };

/** Signs a person up with their invitation and a password of their own. */
export class SignUpMember extends Command<SignUpOutcome> {
  constructor(
    readonly token: string,
    readonly password: string,
    readonly confirmation: string,
    readonly address: string,
    readonly caller: Omit<CommandCaller, 'actor'>,
  ) {
    super();
  }
}

@CommandHandler(SignUpMember)
export class SignUpMemberHandler implements ICommandHandler<SignUpMember> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly hashing: FairSlots,
  ) {}

  async execute({ token, password, confirmation, address, caller }: SignUpMember): Promise<SignUpOutcome> {
    const live = await liveInvitation(this.store, token, address, this.clock.now(), caller);
    if (!live) return { outcome: 'dead-link' };
    const { memberId, inviteHash, member } = live;
    const issues = passwordIssues(password, confirmation, member.email!);
    if (issues.length) return { outcome: 'invalid', email: member.email!, issues };
    const passwordHash = await this.hashing.run(addressKey(address), () => hashPassword(password));
    await run(this.store, memberId, { type: 'SignUpMember', data: { memberId, inviteHash, passwordHash } }, this.clock.now(), {
      ...caller,
      partnerId: member.partnerId!,
      actor: `member:${memberId}`,
    });
    return { outcome: 'signed-up', memberId, partnerId: member.partnerId!, email: member.email! };
  }
}

export type SignInOutcome =
  | { signedIn: true; memberId: string; partnerId: string; sessionId: string; expiresAt: string }
  | { signedIn: false; reason: SignInFailure | 'unknown' };

/**
 * A sign-in attempt on the member the email given names (their id, `memberIdFor`), with password and
 * (once enrolled) a TOTP code; every attempt on a member is an event.
 */
export class SignInMember extends Command<SignInOutcome> {
  constructor(
    readonly memberId: string,
    readonly password: string,
    readonly code: string,
    readonly address: string,
    readonly caller: Omit<CommandCaller, 'actor'>,
  ) {
    super();
  }
}

@CommandHandler(SignInMember)
export class SignInMemberHandler implements ICommandHandler<SignInMember> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly secrets: SiteSecrets,
    private readonly hashing: FairSlots,
  ) {}

  async execute({ memberId, password, code, address, caller }: SignInMember): Promise<SignInOutcome> {
    const member = await loadMember(this.store, memberId);
    // Someone unknown, or invited and not signed up, takes as long to refuse as anyone: the time tells nothing.
    const passwordMatches = await this.hashing.run(addressKey(address), async () =>
      verifyPassword(password, member.passwordHash ?? (await (decoy ??= hashPassword(newSecret())))),
    );
    if (member.status === 'none') return { signedIn: false, reason: 'unknown' };
    const now = this.clock.now();
    const totpStep = passwordMatches && member.sealedTotpSecret ? await this.codeStep(memberId, member.sealedTotpSecret, code, now) : null;
    const sessionId = newSecret();
    const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS).toISOString();
    const { events } = await run(
      this.store,
      memberId,
      { type: 'SignInMember', data: { memberId, sessionHash: secretHash(sessionId), expiresAt, address, passwordMatches, totpStep } },
      now,
      // A failed attempt is not the member's doing: it is recorded in their stream, by an anonymous actor.
      { ...caller, partnerId: member.partnerId!, actor: passwordMatches ? `member:${memberId}` : 'anonymous' },
    );
    const failure = events.find((e): e is MemberSignInFailed => e.type === 'MemberSignInFailed');
    if (failure) return { signedIn: false, reason: failure.data.reason };
    return { signedIn: true, memberId, partnerId: member.partnerId!, sessionId, expiresAt };
  }

  private async codeStep(memberId: string, sealed: string, code: string, now: Date): Promise<number | null> {
    const secret = unseal(this.secrets.sealingKey, sealed, totpContext(memberId));
    return secret === null ? null : matchingStep(secret, code, now);
  }
}

/** The time step a TOTP code of `secret` matches at `now` (or the step before or after), null for none. */
async function matchingStep(secret: string, code: string, now: Date): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({ secret, token: code, epoch: Math.floor(now.getTime() / 1000), epochTolerance: TOTP_TOLERANCE_S });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** What a sealed TOTP secret is bound to: its member. */
export const totpContext = (memberId: string) => `totp:${memberId}`;

/** A new TOTP secret for a member to enrol (RFC 6238: SHA-1, 6 digits, 30 s, as authenticator apps expect). */
export const newTotpSecret = (): string => generateSecret();

/** The otpauth address of a member's TOTP secret, for their app (as a QR code). */
export const totpUri = (email: string, secret: string) => generateURI({ issuer: TOTP_ISSUER, label: email, secret });

/**
 * Turns on a member's second factor once the first code of the new secret is right, the secret
 * sealed in the log; their password again, so that a session left open or stolen cannot lock its
 * owner out. A wrong password or code is recorded (`MemberReauthenticationFailed`), and answered alike.
 */
export class EnrolMemberTotp extends Command<{ enrolled: boolean; position: LogPosition | null }> {
  constructor(
    readonly memberId: string,
    readonly secret: string,
    readonly code: string,
    readonly password: string,
    readonly address: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(EnrolMemberTotp)
export class EnrolMemberTotpHandler implements ICommandHandler<EnrolMemberTotp> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly secrets: SiteSecrets,
    private readonly hashing: FairSlots,
  ) {}

  async execute({ memberId, secret, code, password, address, caller }: EnrolMemberTotp) {
    const member = await loadMember(this.store, memberId);
    if (member.status !== 'active') throw new NotFound('no such member');
    // Refused before the password is checked, so that this answer tells nothing of it.
    if (member.sealedTotpSecret !== null) throw totpSetUpAlready();
    const now = this.clock.now();
    const passwordMatches = await this.hashing.run(addressKey(address), () => verifyPassword(password, member.passwordHash!));
    // The code is checked whatever the password: both failures take as long.
    const totpStep = await matchingStep(secret, code, now);
    const sealedSecret = seal(this.secrets.sealingKey, secret, totpContext(memberId));
    const { events, position } = await run(
      this.store,
      memberId,
      { type: 'EnrolMemberTotp', data: { memberId, sealedSecret, totpStep, passwordMatches, address } },
      now,
      caller,
    );
    return { enrolled: events.some((e) => e.type === 'MemberTotpEnrolled'), position };
  }
}

/** Session changes of a signed-in member: refresh (idle time restarts), sign out, sign out everywhere. */
export class ChangeMemberSession extends Command<{ position: LogPosition | null }> {
  constructor(
    readonly change: 'refresh' | 'sign-out' | 'sign-out-everywhere',
    readonly memberId: string,
    readonly sessionHash: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(ChangeMemberSession)
export class ChangeMemberSessionHandler implements ICommandHandler<ChangeMemberSession> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ change, memberId, sessionHash, caller }: ChangeMemberSession) {
    const command: MemberCommand =
      change === 'refresh'
        ? { type: 'RefreshMemberSession', data: { memberId, sessionHash } }
        : change === 'sign-out'
          ? { type: 'SignOutMember', data: { memberId, sessionHash } }
          : { type: 'SignOutEverywhere', data: { memberId } };
    const { position } = await run(this.store, memberId, command, this.clock.now(), caller);
    return { position };
  }
}

/** Takes a person's access away (an operator's offboarding): their sessions end at once and they cannot sign in until invited again. */
export class RemoveMember extends Command<{ memberId: string; endedSessions: number; position: LogPosition | null }> {
  constructor(
    readonly partnerId: string,
    readonly email: string,
    readonly caller: CommandCaller,
  ) {
    super();
  }
}

@CommandHandler(RemoveMember)
export class RemoveMemberHandler implements ICommandHandler<RemoveMember> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ partnerId, email, caller }: RemoveMember) {
    const memberId = await memberIdFor(this.store, email);
    const member = await loadMember(this.store, memberId);
    if (member.status === 'none' || member.partnerId !== partnerId) throw new NotFound('email: no person of this partner');
    const { position, events } = await run(this.store, memberId, { type: 'RemoveMember', data: { memberId } }, this.clock.now(), {
      ...caller,
      partnerId,
    });
    const removed = events.find((e) => e.type === 'MemberRemoved');
    return { memberId, endedSessions: removed?.type === 'MemberRemoved' ? removed.data.sessionHashes.length : 0, position };
  }
}

/** How every link that cannot sign anyone up is answered, whatever the reason: it tells nothing of the member. */
export const invitationGone = () =>
  new ValidationFailed(
    [
      {
        type: 'invalid',
        resource: 'invitation',
        field: 'token',
        message: 'is not a valid invitation: it was used, replaced or has expired',
      },
    ],
    'This sign-up link does not work: it was used already, replaced by a newer one, or has expired. Ask for a new invitation.',
  );
