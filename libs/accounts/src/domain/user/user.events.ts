import type { DomainEvent } from '@deals/kernel';

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

export type UserEvent = UserRegistered | UserProfileChanged | UserPasswordSet | UserDeleted | UserRestored | DefaultCardChosen;

export const userStream = (userId: string) => `user-${userId}`;

/** The email of a user is unique per partner, compared case-insensitively. */
export const emailKey = (email: string) => email.trim().toLowerCase();
