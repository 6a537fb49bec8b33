import { defineProjection, ViewDocument } from '@deals/kernel';
import type { MemberEvent } from '../../domain/member/member.events';

/** "Who are the people of partner P, and who has email E?" No secret, not even a hash. */
export interface PartnerMember extends ViewDocument {
  partnerId: string;
  email: string;
  status: 'invited' | 'active' | 'removed';
  invitedAt: string;
  inviteExpiresAt: string;
  signedUpAt: string | null;
  totpEnrolled: boolean;
  lastSignInAt: string | null;
}

export const PARTNER_MEMBERS = 'partner_members';

export const partnerMembersProjection = defineProjection<PartnerMember>({
  name: PARTNER_MEMBERS,
  handles: ['MemberInvited', 'MemberSignedUp', 'MemberTotpEnrolled', 'MemberSignedIn', 'MemberRemoved'],
  // A few people a partner: small, and read on every page.
  keepInMemory: true,
  indexes: [{ keys: { partnerId: 1 } }, { keys: { email: 1 } }],
  documentIds: (event) => [(event.data as { memberId: string }).memberId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as MemberEvent;
    if (event.type === 'MemberInvited') {
      const { partnerId, email, invitedAt, expiresAt } = event.data;
      if (view && view.status !== 'removed') return { ...view, invitedAt, inviteExpiresAt: expiresAt };
      // A first invitation, or one after the person was removed: they start afresh.
      const member: PartnerMember = {
        _id: id,
        _pos: recorded.position,
        partnerId,
        email,
        status: 'invited',
        invitedAt,
        inviteExpiresAt: expiresAt,
        signedUpAt: null,
        totpEnrolled: false,
        lastSignInAt: null,
      };
      return member;
    }
    if (!view) return null;
    switch (event.type) {
      case 'MemberSignedUp':
        return { ...view, status: 'active', signedUpAt: event.data.signedUpAt };
      case 'MemberTotpEnrolled':
        return { ...view, totpEnrolled: true };
      case 'MemberSignedIn':
        return { ...view, lastSignInAt: event.data.signedInAt };
      case 'MemberRemoved':
        return { ...view, status: 'removed', totpEnrolled: false };
      default:
        return null;
    }
  },
});
