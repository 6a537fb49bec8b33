import { foldedIdentity, type DomainEvent } from '@deals/kernel';

/** What a partner may set on a user, as the user aggregate keeps it. */
export interface UserProfile {
  email: string;
  firstName: string | null;
  lastName: string | null;
  birthday: string | null;
  postalCode: string | null;
  source: string | null;
  token: string | null;
  partnerData: Record<string, unknown>;
}

export type UserRegistered = DomainEvent<
  'UserRegistered',
  { userId: string; partnerId: string; profile: UserProfile; credits: number; sessionId: string | null; registeredAt: string }
>;
export type UserProfileChanged = DomainEvent<'UserProfileChanged', { userId: string; changes: Partial<UserProfile> }>;
/** Only the slow hash: scrypt with its own salt and parameters. */
export type UserPasswordSet = DomainEvent<'UserPasswordSet', { userId: string; passwordHash: string }>;
export type UserDeleted = DomainEvent<'UserDeleted', { userId: string }>;
export type UserRestored = DomainEvent<'UserRestored', { userId: string }>;
export type DefaultCardChosen = DomainEvent<'DefaultCardChosen', { userId: string; cardId: string }>;
/**
 * The user's personal data was erased (their key deleted: every event's personal values read as
 * gone), asked by their partner or an operator. The user is deleted for good; purchases, coupons
 * and amounts stay, for the books.
 */
export type UserPersonalDataErased = DomainEvent<
  'UserPersonalDataErased',
  { userId: string; partnerId: string; by: 'partner' | 'operator'; erasedAt: string }
>;

/** The user's partner acknowledged the erasure: it erased its own copies of the user's data. */
export type UserErasureAcknowledged = DomainEvent<'UserErasureAcknowledged', { userId: string; partnerId: string; acknowledgedAt: string }>;

export type UserEvent =
  | UserRegistered
  | UserProfileChanged
  | UserPasswordSet
  | UserDeleted
  | UserRestored
  | DefaultCardChosen
  | UserPersonalDataErased
  | UserErasureAcknowledged;

export const userStream = (userId: string) => `user-${userId}`;

/** The email of a user is unique per partner, compared trimmed, in NFC and case-folded (`foldedIdentity`): its claim's key. */
export const emailKey = (email: string) => foldedIdentity(email.trim());

/**
 * An address's key before addresses were compared in NFC and case-folded: its lower case. The two
 * differ only for some addresses outside ASCII (decomposed letters, `ß`, `ς`); claims of those made
 * before are still found under this one.
 */
export const legacyEmailKey = (email: string) => email.trim().toLowerCase();

/** The email key of a profile, or null once its email was erased. */
export const profileEmailKey = (profile: Pick<UserProfile, 'email'> | null): string | null =>
  typeof profile?.email === 'string' ? emailKey(profile.email) : null;

/** A profile with its personal data gone (what every event of an erased user reads as). */
export const erasedProfile = (profile: UserProfile | null): UserProfile => ({
  email: null as unknown as string,
  firstName: null,
  lastName: null,
  birthday: null,
  postalCode: null,
  source: profile?.source ?? null,
  token: profile?.token ?? null,
  partnerData: {},
});
