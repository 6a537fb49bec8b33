import { defineProjection, ViewDocument } from '@deals/kernel';
import type { UserEvent } from '../../domain/user/user.events';

/** "Which of a partner's users were erased, and has the partner acknowledged it?" (the partner site's list). */
export interface UserErasure extends ViewDocument {
  partnerId: string;
  erasedAt: string;
  by: 'partner' | 'operator';
  /** Who asked (the actor of the erasure's request). */
  askedBy: string;
  acknowledgedAt: string | null;
  acknowledgedBy: string | null;
}

export const USER_ERASURES = 'user_erasures';

export const userErasuresProjection = defineProjection<UserErasure>({
  name: USER_ERASURES,
  handles: ['UserPersonalDataErased', 'UserErasureAcknowledged'],
  indexes: [{ keys: { partnerId: 1 } }, { keys: { erasedAt: 1 } }],
  documentIds: (event) => [(event.data as { userId: string }).userId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as UserEvent;
    if (event.type === 'UserPersonalDataErased') {
      const { partnerId, erasedAt, by } = event.data;
      return {
        _id: id,
        _pos: recorded.position,
        partnerId,
        erasedAt,
        by,
        askedBy: recorded.metadata.actor ?? by,
        acknowledgedAt: null,
        acknowledgedBy: null,
      };
    }
    if (event.type === 'UserErasureAcknowledged' && view)
      return { ...view, acknowledgedAt: event.data.acknowledgedAt, acknowledgedBy: recorded.metadata.actor ?? null };
    return null;
  },
});
