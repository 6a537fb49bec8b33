import { hashPassword, PARTNER_ACCOUNTS } from '@deals/accounts';
import {
  Clock,
  CommandCaller,
  EventStore,
  FairSlots,
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
import { emailIssues, INVITE_LIFETIME_MS, normalEmail, passwordIssues } from '../domain/member/member-rules';
import { invitationIsLive, invitationRefusal, InvitedMember } from '../domain/member/member.decider';
import { loadMember, memberIdFor, runOnMember } from './member-ids';
import { newSecret, secretHash } from './site-secrets';

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
    const { position } = await runOnMember(
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
): Promise<{ memberId: string; inviteHash: string; member: InvitedMember } | null> {
  const invitation = invitationOf(token);
  const member = invitation && (await loadMember(store, invitation.memberId));
  if (!invitation || !member || member.status === 'none') return null;
  const { memberId } = invitation;
  const inviteHash = secretHash(invitation.secret);
  if (member.status === 'invited' && invitationRefusal(member, inviteHash, now) === null) return { memberId, inviteHash, member };
  await runOnMember(store, memberId, { type: 'PresentInvitation', data: { memberId, inviteHash, address } }, now, {
    ...caller,
    partnerId: member.partnerId,
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
    return live && { memberId: live.memberId, email: live.member.email };
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
    const issues = passwordIssues(password, confirmation, member.email);
    if (issues.length) return { outcome: 'invalid', email: member.email, issues };
    const passwordHash = await this.hashing.run(addressKey(address), () => hashPassword(password));
    await runOnMember(this.store, memberId, { type: 'SignUpMember', data: { memberId, inviteHash, passwordHash } }, this.clock.now(), {
      ...caller,
      partnerId: member.partnerId,
      actor: `member:${memberId}`,
    });
    return { outcome: 'signed-up', memberId, partnerId: member.partnerId, email: member.email };
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
