import type { ErasureEvents, PersonalFields, PersonalFieldsOf } from '@deals/kernel';
import type { UserProfile } from './user.events';

/** A user's profile fields that are personal data (source and token are the partner's own labels). */
export const PERSONAL_PROFILE_FIELDS = [
  'email',
  'firstName',
  'lastName',
  'birthday',
  'postalCode',
  'partnerData',
] as const satisfies ReadonlyArray<keyof UserProfile>;

const ofUser = (under: string): PersonalFieldsOf => ({
  owner: (data) => data.userId as string,
  paths: PERSONAL_PROFILE_FIELDS.map((field) => [under, field]),
});

/** Where the accounts' events keep a user's personal data, encrypted under that user's key in the log. */
export const ACCOUNTS_PERSONAL_FIELDS: PersonalFields = new Map([
  ['UserRegistered', ofUser('profile')],
  ['UserProfileChanged', ofUser('changes')],
  // An email claim names the address it holds; an erased user's claim is given back without it.
  ['EmailClaimed', { owner: (data) => data.userId as string, paths: [['emailKey']] }],
  ['EmailReleased', { owner: (data) => data.userId as string, paths: [['emailKey']], whenErased: 'drop' }],
]);

/** The event that says a user's personal data was erased. */
export const ACCOUNTS_ERASURE_EVENTS: ErasureEvents = new Map([['UserPersonalDataErased', (data) => data.userId as string]]);
