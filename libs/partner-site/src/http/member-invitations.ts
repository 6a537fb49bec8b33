import { Clock, EventStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { invitationOf, loadMember } from '../commands/member.commands';
import { secretHash } from '../commands/site-secrets';

/** Reads an invitation link's token: whose it is, while it is unused and unexpired. */
@Injectable()
export class MemberInvitations {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async open(token: string): Promise<{ memberId: string; email: string } | null> {
    const invitation = invitationOf(token);
    if (!invitation) return null;
    const member = await loadMember(this.store, invitation.memberId);
    const usable =
      member.status === 'invited' &&
      member.inviteHash === secretHash(invitation.secret) &&
      Date.parse(member.inviteExpiresAt!) > this.clock.now().getTime();
    return usable ? { memberId: invitation.memberId, email: member.email! } : null;
  }
}
