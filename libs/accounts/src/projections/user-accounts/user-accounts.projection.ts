import { defineProjection, ViewDocument } from '@deals/kernel';
import type { UserEvent, UserProfile } from '../../domain/user/user.events';
import { erasedProfile, profileEmailKey } from '../../domain/user/user.events';

/** "Who is user X, of which partner, and which card is their default?" */
export interface UserAccount extends ViewDocument {
  partnerId: string;
  /** Null once the user's personal data was erased. */
  emailKey: string | null;
  profile: UserProfile;
  credits: number;
  deleted: boolean;
  defaultCardId: string | null;
  registeredAt: string;
  /** When the user's personal data was erased (its profile then reads as gone; the user stays deleted). */
  erasedAt?: string;
}

export const USER_ACCOUNTS = 'user_accounts';

export const userAccountsProjection = defineProjection<UserAccount>({
  name: USER_ACCOUNTS,
  handles: ['UserRegistered', 'UserProfileChanged', 'UserDeleted', 'UserRestored', 'DefaultCardChosen', 'UserPersonalDataErased'],
  indexes: [{ keys: { partnerId: 1 } }, { keys: { emailKey: 1 } }],
  documentIds: (event) => [(event.data as { userId: string }).userId],
  evolve(view, recorded, id) {
    const event = recorded as unknown as UserEvent;
    if (event.type === 'UserRegistered') {
      const { partnerId, profile, credits, registeredAt } = event.data;
      return {
        _id: id,
        _pos: recorded.position,
        partnerId,
        emailKey: profileEmailKey(profile),
        profile,
        credits,
        deleted: false,
        defaultCardId: null,
        registeredAt,
      };
    }
    if (!view) return null;
    switch (event.type) {
      case 'UserProfileChanged': {
        const profile = { ...view.profile, ...event.data.changes };
        return { ...view, profile, emailKey: profileEmailKey(profile) };
      }
      case 'UserDeleted':
        return { ...view, deleted: true };
      case 'UserRestored':
        return { ...view, deleted: false };
      case 'DefaultCardChosen':
        return { ...view, defaultCardId: event.data.cardId };
      case 'UserPersonalDataErased':
        return { ...view, profile: erasedProfile(view.profile), emailKey: null, deleted: true, erasedAt: event.data.erasedAt };
      default:
        return null;
    }
  },
});
