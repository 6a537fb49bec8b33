import { Decider, DomainCommand, NotFound, UpdateFailed, ValidationFailed } from '@deals/kernel';
import { DefaultCardChosen, erasedProfile, UserEvent, UserPersonalDataErased, UserProfile, UserRegistered } from './user.events';

export type RegisterUser = DomainCommand<'RegisterUser', UserRegistered['data']>;
/**
 * `refuseOtherToken`: update_by_email without overwrite_token=true: a token that
 * differs from a stored one is refused, decided on the stream as it is written.
 */
export type UpdateUser = DomainCommand<
  'UpdateUser',
  { userId: string; partnerId: string; changes: Partial<UserProfile>; deleted?: boolean; passwordHash?: string; refuseOtherToken?: boolean }
>;
export type ChooseDefaultCard = DomainCommand<
  'ChooseDefaultCard',
  { userId: string; partnerId: string; cardId: string; onlyIfNone: boolean }
>;
/** Erases a user's personal data: asked by its partner (`partnerId`), or by an operator (any partner's user, `partnerId` null). */
export type EraseUserPersonalData = DomainCommand<
  'EraseUserPersonalData',
  { userId: string; partnerId: string | null; by: UserPersonalDataErased['data']['by'] }
>;
/** The partner says it erased its own copies of an erased user's data. */
export type AcknowledgeUserErasure = DomainCommand<'AcknowledgeUserErasure', { userId: string; partnerId: string }>;
export type UserCommand = RegisterUser | UpdateUser | ChooseDefaultCard | EraseUserPersonalData | AcknowledgeUserErasure;

export interface User {
  registered: boolean;
  partnerId: string | null;
  profile: UserProfile | null;
  credits: number;
  deleted: boolean;
  defaultCardId: string | null;
  /** Its personal data erased (when, ISO 8601): deleted for good, its profile read as gone. */
  erased: boolean;
  erasedAt: string | null;
  /** When its partner acknowledged the erasure. */
  erasureAcknowledgedAt: string | null;
}

/** A user of another partner does not exist for this one; an erased one is no one's. */
function owned(user: User, partnerId: string): UserProfile {
  if (!user.registered || user.partnerId !== partnerId) throw new NotFound('user not found');
  if (user.erased) throw new NotFound('user not found: their personal data was erased');
  return user.profile!;
}

export const userDecider: Decider<User, UserCommand, UserEvent> = {
  initialState: () => ({
    registered: false,
    partnerId: null,
    profile: null,
    credits: 0,
    deleted: false,
    defaultCardId: null,
    erased: false,
    erasedAt: null,
    erasureAcknowledgedAt: null,
  }),

  decide(command, user, now) {
    switch (command.type) {
      case 'RegisterUser':
        if (user.registered)
          throw new ValidationFailed([{ type: 'invalid', resource: 'user', field: 'id', message: 'is already registered' }]);
        return [{ type: 'UserRegistered', data: command.data }];
      case 'UpdateUser': {
        const { userId, partnerId, changes, deleted, passwordHash, refuseOtherToken } = command.data;
        const profile = owned(user, partnerId);
        if (refuseOtherToken && changes.token !== undefined && profile.token !== null && changes.token !== profile.token) {
          throw new UpdateFailed('the user has a different token; add overwrite_token=true to replace it');
        }
        // Deleting a deleted user again, and nothing else, changes nothing.
        if (user.deleted && deleted === true && Object.keys(changes).length === 0 && !passwordHash) return [];
        if (user.deleted && deleted !== false) {
          throw new ValidationFailed([
            { type: 'invalid', resource: 'user', field: 'is_deleted', message: 'the user is deleted: only is_deleted=false restores it' },
          ]);
        }
        const events: UserEvent[] = [];
        if (user.deleted && deleted === false) events.push({ type: 'UserRestored', data: { userId } });
        const changed = Object.fromEntries(
          Object.entries(changes).filter(
            ([k, v]) => JSON.stringify(v) !== JSON.stringify((profile as unknown as Record<string, unknown>)[k]),
          ),
        );
        if (Object.keys(changed).length) events.push({ type: 'UserProfileChanged', data: { userId, changes: changed } });
        if (passwordHash) events.push({ type: 'UserPasswordSet', data: { userId, passwordHash } });
        if (!user.deleted && deleted === true) events.push({ type: 'UserDeleted', data: { userId } });
        return events;
      }
      case 'ChooseDefaultCard': {
        const { userId, partnerId, cardId, onlyIfNone } = command.data;
        owned(user, partnerId);
        if (user.deleted)
          throw new ValidationFailed([
            { type: 'invalid', resource: 'user', field: 'is_deleted', message: 'the user is deleted: only is_deleted=false restores it' },
          ]);
        if (user.defaultCardId === cardId || (onlyIfNone && user.defaultCardId !== null)) return [];
        const event: DefaultCardChosen = { type: 'DefaultCardChosen', data: { userId, cardId } };
        return [event];
      }
      case 'EraseUserPersonalData': {
        const { userId, partnerId, by } = command.data;
        if (!user.registered || (partnerId !== null && user.partnerId !== partnerId)) throw new NotFound('user not found');
        if (user.erased) return [];
        const event: UserPersonalDataErased = {
          type: 'UserPersonalDataErased',
          data: { userId, partnerId: user.partnerId!, by, erasedAt: now.toISOString() },
        };
        return [event];
      }
      case 'AcknowledgeUserErasure': {
        const { userId, partnerId } = command.data;
        if (!user.registered || user.partnerId !== partnerId) throw new NotFound('user not found');
        if (!user.erased) throw new NotFound('user has no erasure to acknowledge');
        if (user.erasureAcknowledgedAt) return [];
        return [{ type: 'UserErasureAcknowledged', data: { userId, partnerId, acknowledgedAt: now.toISOString() } }];
      }
    }
  },

  evolve(user, event) {
    switch (event.type) {
      case 'UserRegistered':
        return { ...user, registered: true, partnerId: event.data.partnerId, profile: event.data.profile, credits: event.data.credits };
      case 'UserProfileChanged':
        return { ...user, profile: { ...user.profile!, ...event.data.changes } };
      case 'UserPasswordSet':
        return user;
      case 'UserDeleted':
        return { ...user, deleted: true };
      case 'UserRestored':
        return { ...user, deleted: false };
      case 'DefaultCardChosen':
        return { ...user, defaultCardId: event.data.cardId };
      case 'UserErasureAcknowledged':
        return { ...user, erasureAcknowledgedAt: event.data.acknowledgedAt };
      case 'UserPersonalDataErased':
        return { ...user, erased: true, erasedAt: event.data.erasedAt, deleted: true, profile: erasedProfile(user.profile) };
    }
  },
};
