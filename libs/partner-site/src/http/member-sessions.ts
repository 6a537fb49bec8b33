import { Clock, CommandCaller, Unauthorized, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ChangeMemberSession } from '../commands/member.commands';
import { secretHash } from '../commands/site-secrets';
import { SESSION_IDLE_MS, SESSION_REFRESH_MS } from '../domain/member/member-rules';
import { MEMBER_SESSIONS, MemberSession } from '../projections/member-sessions/member-sessions.projection';
import { PARTNER_MEMBERS, PartnerMember } from '../projections/partner-members/partner-members.projection';

/** The person a page is shown to, from their session. */
export interface SignedInMember {
  memberId: string;
  /** The live partner the member belongs to. */
  partnerId: string;
  /** The account the member's pages show and change: the live partner's, or in test mode its sandbox's. */
  accountId: string;
  livemode: boolean;
  email: string;
  totpEnrolled: boolean;
  sessionHash: string;
}

/**
 * Finds the member of a session cookie in the sessions view (which every process follows, so a
 * sign-out anywhere ends the session everywhere), and restarts its idle time now and then.
 */
@Injectable()
export class MemberSessions {
  constructor(
    private readonly views: ViewStore,
    private readonly clock: Clock,
    private readonly commands: CommandBus,
  ) {}

  /** The session's member; null when the session is unknown, signed out, idle too long or past its end. */
  async authenticate(sessionId: string, caller: Omit<CommandCaller, 'actor'>): Promise<SignedInMember | null> {
    const sessionHash = secretHash(sessionId);
    const session = await this.views.findById<MemberSession>(MEMBER_SESSIONS, sessionHash);
    const now = this.clock.now().getTime();
    if (!session || session.endedAt !== null || Date.parse(session.expiresAt) <= now) return null;
    const idle = now - Date.parse(session.lastSeenAt);
    if (idle >= SESSION_IDLE_MS) return null;
    const member = await this.views.findById<PartnerMember>(PARTNER_MEMBERS, session.memberId);
    if (!member || member.status !== 'active') return null;
    if (idle >= SESSION_REFRESH_MS) {
      try {
        await this.commands.execute(
          new ChangeMemberSession('refresh', member._id, sessionHash, {
            ...caller,
            partnerId: member.partnerId,
            actor: `member:${member._id}`,
          }),
        );
      } catch (error) {
        // The log knows better than the view: a sign-out not shown yet, or the idle time over.
        if (error instanceof Unauthorized) return null;
        throw error;
      }
    }
    return {
      memberId: member._id,
      partnerId: member.partnerId,
      accountId: member.partnerId,
      livemode: true,
      email: member.email,
      totpEnrolled: member.totpEnrolled,
      sessionHash,
    };
  }
}
