import { Decider, DomainCommand, ignoredEvent, NotFound, unknownCommand, UpdateFailed, ValidationFailed } from '@deals/kernel';
import { erasedProfile, UserEvent, UserPersonalDataErased, UserProfile, UserRegistered } from './user.events';

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

/** A user's stream: empty, or a registered user: active, deleted (its partner may restore it), or erased. */
export type User = { status: 'unregistered' } | ActiveUser | ErasedUser;
export type RegisteredUser = ActiveUser | ErasedUser;

interface UserRecord {
  partnerId: string;
  profile: UserProfile;
  credits: number;
  defaultCardId: string | null;
}

export interface ActiveUser extends UserRecord {
  status: 'active' | 'deleted';
}

/** Its personal data erased: deleted for good, its profile read as gone. */
export interface ErasedUser extends UserRecord {
  status: 'erased';
  erasedAt: string;
  /** When its partner acknowledged the erasure (null: not yet). */
  erasureAcknowledgedAt: string | null;
}

/** The user's profile; null before it is registered. */
export const profileOf = (user: User): UserProfile | null => (user.status === 'unregistered' ? null : user.profile);

/** The user of `partnerId` (any partner's: null); not found for another partner's, or one never registered. */
function ofPartner(user: User, partnerId: string | null): RegisteredUser {
  if (user.status === 'unregistered' || (partnerId !== null && user.partnerId !== partnerId)) throw new NotFound('user not found');
  return user;
}

/** A user of another partner does not exist for this one; an erased one is no one's. */
function owned(user: User, partnerId: string): ActiveUser {
  const found = ofPartner(user, partnerId);
  if (found.status === 'erased') throw new NotFound('user not found: their personal data was erased');
  return found;
}

const deletedRefused = () =>
  new ValidationFailed([
    { type: 'invalid', resource: 'user', field: 'is_deleted', message: 'the user is deleted: only is_deleted=false restores it' },
  ]);

function update({ data }: UpdateUser, user: User): UserEvent[] {
  const { userId, partnerId, changes, deleted, passwordHash, refuseOtherToken } = data;
  const { profile, status } = owned(user, partnerId);
  if (refuseOtherToken && changes.token !== undefined && profile.token !== null && changes.token !== profile.token) {
    throw new UpdateFailed('the user has a different token; add overwrite_token=true to replace it');
  }
  // Deleting a deleted user again, and nothing else, changes nothing.
  if (status === 'deleted' && deleted === true && Object.keys(changes).length === 0 && !passwordHash) return [];
  if (status === 'deleted' && deleted !== false) throw deletedRefused();
  const events: UserEvent[] = [];
  if (status === 'deleted' && deleted === false) events.push({ type: 'UserRestored', data: { userId } });
  const changed = Object.fromEntries(
    Object.entries(changes).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify((profile as unknown as Record<string, unknown>)[k])),
  );
  if (Object.keys(changed).length) events.push({ type: 'UserProfileChanged', data: { userId, changes: changed } });
  if (passwordHash) events.push({ type: 'UserPasswordSet', data: { userId, passwordHash } });
  if (status === 'active' && deleted === true) events.push({ type: 'UserDeleted', data: { userId } });
  return events;
}

function chooseDefaultCard({ data }: ChooseDefaultCard, user: User): UserEvent[] {
  const { userId, partnerId, cardId, onlyIfNone } = data;
  const { status, defaultCardId } = owned(user, partnerId);
  if (status === 'deleted') throw deletedRefused();
  if (defaultCardId === cardId || (onlyIfNone && defaultCardId !== null)) return [];
  return [{ type: 'DefaultCardChosen', data: { userId, cardId } }];
}

function erase({ data }: EraseUserPersonalData, user: User, now: Date): UserEvent[] {
  const { userId, partnerId, by } = data;
  const found = ofPartner(user, partnerId);
  if (found.status === 'erased') return [];
  return [{ type: 'UserPersonalDataErased', data: { userId, partnerId: found.partnerId, by, erasedAt: now.toISOString() } }];
}

function acknowledgeErasure({ data }: AcknowledgeUserErasure, user: User, now: Date): UserEvent[] {
  const { userId, partnerId } = data;
  const found = ofPartner(user, partnerId);
  if (found.status !== 'erased') throw new NotFound('user has no erasure to acknowledge');
  if (found.erasureAcknowledgedAt) return [];
  return [{ type: 'UserErasureAcknowledged', data: { userId, partnerId, acknowledgedAt: now.toISOString() } }];
}

export const userDecider: Decider<User, UserCommand, UserEvent> = {
  initialState: () => ({ status: 'unregistered' }),

  decide(command, user, now) {
    switch (command.type) {
      case 'RegisterUser':
        if (user.status !== 'unregistered')
          throw new ValidationFailed([{ type: 'invalid', resource: 'user', field: 'id', message: 'is already registered' }]);
        return [{ type: 'UserRegistered', data: command.data }];
      case 'UpdateUser':
        return update(command, user);
      case 'ChooseDefaultCard':
        return chooseDefaultCard(command, user);
      case 'EraseUserPersonalData':
        return erase(command, user, now);
      case 'AcknowledgeUserErasure':
        return acknowledgeErasure(command, user, now);
      default:
        return unknownCommand(command);
    }
  },

  evolve(user, event) {
    if (event.type === 'UserRegistered') {
      const { partnerId, profile, credits } = event.data;
      return { status: 'active', partnerId, profile, credits, defaultCardId: null };
    }
    // Every other event follows the registration (one before it is none the decider wrote, and is ignored).
    if (user.status === 'unregistered') return user;
    switch (event.type) {
      case 'UserProfileChanged':
        return { ...user, profile: { ...user.profile, ...event.data.changes } };
      case 'UserPasswordSet':
        return user;
      case 'UserDeleted':
        return user.status === 'active' ? { ...user, status: 'deleted' } : user;
      case 'UserRestored':
        return user.status === 'deleted' ? { ...user, status: 'active' } : user;
      case 'DefaultCardChosen':
        return { ...user, defaultCardId: event.data.cardId };
      case 'UserErasureAcknowledged':
        return user.status === 'erased' ? { ...user, erasureAcknowledgedAt: event.data.acknowledgedAt } : user;
      case 'UserPersonalDataErased': {
        const { partnerId, credits, defaultCardId } = user;
        const profile = erasedProfile(user.profile);
        return { status: 'erased', partnerId, profile, credits, defaultCardId, erasedAt: event.data.erasedAt, erasureAcknowledgedAt: null };
      }
      default:
        return ignoredEvent(event, user);
    }
  },
};
