import { defineProjection, ViewDocument } from '@deals/kernel';
import type { MemberEvent } from '../../domain/member/member.events';

/** "Which member does the session with this hash belong to, and is it still good?" Keyed by the session id's hash. */
export interface MemberSession extends ViewDocument {
  memberId: string;
  partnerId: string;
  signedInAt: string;
  expiresAt: string;
  lastSeenAt: string;
  /** When it was signed out (alone or everywhere); null while it lasts. */
  endedAt: string | null;
}

export const MEMBER_SESSIONS = 'partner_member_sessions';

export const memberSessionsProjection = defineProjection<MemberSession>({
  name: MEMBER_SESSIONS,
  handles: ['MemberSignedIn', 'MemberSessionRefreshed', 'MemberSignedOut', 'MemberSignedOutEverywhere', 'MemberRemoved'],
  indexes: [{ keys: { memberId: 1 } }],
  documentIds: (event) => {
    const data = event.data as { sessionHash?: string; sessionHashes?: string[] };
    return data.sessionHashes ?? [data.sessionHash!];
  },
  evolve(view, recorded, id) {
    const event = recorded as unknown as MemberEvent;
    if (event.type === 'MemberSignedIn') {
      const { memberId, partnerId, signedInAt, expiresAt } = event.data;
      return { _id: id, _pos: recorded.position, memberId, partnerId, signedInAt, expiresAt, lastSeenAt: signedInAt, endedAt: null };
    }
    if (!view) return null;
    switch (event.type) {
      case 'MemberSessionRefreshed':
        return { ...view, lastSeenAt: event.data.seenAt };
      case 'MemberSignedOut':
      case 'MemberSignedOutEverywhere':
      case 'MemberRemoved':
        return view.endedAt ? null : { ...view, endedAt: event.data.signedOutAt };
      default:
        return null;
    }
  },
});
