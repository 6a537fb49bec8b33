import { flag, requestDto } from '@deals/wire';
import { z } from 'zod';
import {
  BIRTHDAY_MESSAGE,
  characterCount,
  EMAIL,
  isCalendarDate,
  isPastDate,
  NAME_MAX,
  nestingDepth,
  PARTNER_DATA_MAX_DEPTH,
  PARTNER_TEXT_MAX,
  PASSWORD_MIN,
  ZIP,
} from '../domain/user/user-profile';
import type { NewProfile, NewUser, PurchaseUser, UserChanges, UserChangesByEmail } from '../domain/user/user-profile';
import type { UserProfile } from '../domain/user/user.events';

/**
 * A user's fields, one schema each, as POST /users, PUT /users/:user_id, update_by_email and
 * the full purchase's user object take them: the same rules and messages everywhere.
 * Text is trimmed; null clears a field (not the email); entries name the field as sent.
 */

const TEXT = 'must be text';

/** Reports `problem(text)`, if any, as the field's issue; else the text. */
function checked(text: string, problem: (text: string) => string | null, ctx: z.RefinementCtx): string {
  const message = problem(text);
  if (message === null) return text;
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
}

/** A profile text that null clears: trimmed, then held to `problem`. */
const clearableText = (problem: (text: string) => string | null) =>
  z
    .string({ error: TEXT })
    .nullable()
    .transform((value, ctx) => (value === null ? null : checked(value.trim(), problem, ctx)));

/** The email: required where the call makes a user ("is required"), text, an address. */
export const emailField = () =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : TEXT) })
    .transform((value, ctx) => checked(value.trim(), (text) => (EMAIL.test(text) ? null : 'is not an email address'), ctx))
    .meta({ description: 'unique per partner, compared case-insensitively', example: 'ann@example.com' });

const nameField = (description: string, example: string) =>
  clearableText((text) => (text.length > NAME_MAX ? `must be at most ${NAME_MAX} characters` : null))
    .optional()
    .meta({ description: `${description}, at most ${NAME_MAX} characters; null clears it`, example });

const partnerText = (description: string, example: string) =>
  clearableText((text) => (text === '' || text.length > PARTNER_TEXT_MAX ? `must be 1 to ${PARTNER_TEXT_MAX} characters` : null))
    .optional()
    .meta({ description: `${description}; with partner credentials only (not a user's access token); null clears it`, example });

/** Every profile field but the email, by its name in the API. */
export const profileFields = {
  first_name: nameField('first name', 'Ann'),
  last_name: nameField('last name', 'Lee'),
  birthday: clearableText((text) =>
    // A date after today is refused here by the host's time so that it is told with the body's other
    // problems; whether it is past is decided again by the service's clock when the user is written.
    isCalendarDate(text) && isPastDate(text, new Date()) ? null : BIRTHDAY_MESSAGE,
  )
    .optional()
    .meta({ description: 'a past date, YYYY-MM-DD, from 1900; null clears it', example: '1990-04-01' }),
  postal_code: clearableText((text) => (ZIP.test(text) ? null : 'must be a five-digit zip code'))
    .optional()
    .meta({ description: 'US zip code (12345 or 12345-6789); null clears it', example: '60601' }),
  source: partnerText('for reporting: where the user came from', 'web'),
  token: partnerText("the partner's own token for the user", 'partner-1'),
  partner_data: z
    .record(z.string(), z.unknown(), { error: 'must be an object' })
    .refine((value) => nestingDepth(value) <= PARTNER_DATA_MAX_DEPTH, `must nest at most ${PARTNER_DATA_MAX_DEPTH} levels deep`)
    .optional()
    .meta({
      description: `the partner's data on the user (replaced whole when sent; use care), at most ${PARTNER_DATA_MAX_DEPTH} levels deep`,
      example: { tier: 'gold' },
    }),
};

const credits = z
  .int({ error: 'must be whole cents, not negative' })
  .min(0, 'must be whole cents, not negative')
  .optional()
  .meta({ description: "starting credit in cents (the user's points); default: the new-user signup credit", example: 1200 });

const sessionId = z
  .string({ error: TEXT })
  .optional()
  .meta({ description: 'an affiliate session: links the user to the affiliate of the session', example: 's-1' });

const isDeleted = z
  .boolean({ error: 'must be true or false' })
  .optional()
  .meta({ description: 'true: soft delete; false: restore a deleted user', example: false });

/** The two names of each password field (`pass`, the full purchase's `password`), both accepted for compatibility. */
const PASSWORD_NAMES = [
  ['pass', 'password'],
  ['pass_confirmation', 'password_confirmation'],
] as const;

/** The password fields, under both names: `pass`/`password`, `pass_confirmation`/`password_confirmation`. */
export const passwordFields = {
  pass: z
    .string({ error: TEXT })
    .optional()
    .meta({ description: `the password, at least ${PASSWORD_MIN} characters; needs pass_confirmation`, example: 'secret1' }),
  password: z.string({ error: TEXT }).optional().meta({ description: 'pass, by its other name' }),
  pass_confirmation: z.string({ error: TEXT }).optional().meta({ description: 'the password again', example: 'secret1' }),
  password_confirmation: z.string({ error: TEXT }).optional().meta({ description: 'pass_confirmation, by its other name' }),
};

type PasswordFields = { [K in keyof typeof passwordFields]?: unknown };

/**
 * The password rules, on an object holding {@link passwordFields}: both names of a field
 * with different values is a conflict (neither can be taken as the one meant); else a password (or
 * a confirmation alone) needs at least five characters as a reader counts them (an emoji, even of
 * several joined code points, is one) and a matching confirmation. Entries name the fields as sent.
 * Runs whatever else the object holds, so that its problems are told with the others.
 */
function passwordRules(value: PasswordFields, ctx: z.RefinementCtx): void {
  const fields = value as Record<string, unknown>;
  // A field that is not text is told so by its own schema.
  if (Object.keys(passwordFields).some((name) => fields[name] !== undefined && typeof fields[name] !== 'string')) return;
  const fail = (field: string, message: string) => ctx.addIssue({ code: 'custom', path: [field], message });
  let conflict = false;
  for (const [short, long] of PASSWORD_NAMES) {
    if (fields[short] !== undefined && fields[long] !== undefined && fields[short] !== fields[long]) {
      // eslint-disable-next-line no-restricted-syntax -- field names of ours
      fail(long, `differs from ${short}: give one of the two`);
      conflict = true;
    }
  }
  if (conflict) return;
  const passName = fields.pass !== undefined || fields.password === undefined ? 'pass' : 'password';
  const confirmationName =
    fields.pass_confirmation !== undefined
      ? 'pass_confirmation'
      : fields.password_confirmation !== undefined
        ? 'password_confirmation'
        : `${passName}_confirmation`;
  const pass = fields[passName] as string | undefined;
  const confirmation = fields[confirmationName] as string | undefined;
  if (pass === undefined && confirmation === undefined) return;
  if (pass === undefined) fail(passName, TEXT);
  else if (characterCount(pass) < PASSWORD_MIN) fail(passName, `must be at least ${PASSWORD_MIN} characters`);
  // eslint-disable-next-line no-restricted-syntax -- field names of ours
  else if (confirmation === undefined) fail(confirmationName, `is required with ${passName}`);
  // eslint-disable-next-line no-restricted-syntax -- field names of ours
  else if (confirmation !== pass) fail(confirmationName, `does not match ${passName}`);
}

const always = { when: () => true };

/** The profile changes a body's fields make, in the user's own names (absent fields are left out). */
function profileOf(fields: Partial<Record<keyof typeof profileFields | 'email', unknown>>): Partial<UserProfile> {
  const names: Array<[keyof typeof fields, keyof UserProfile]> = [
    ['email', 'email'],
    ['first_name', 'firstName'],
    ['last_name', 'lastName'],
    ['birthday', 'birthday'],
    ['postal_code', 'postalCode'],
    ['source', 'source'],
    ['token', 'token'],
    ['partner_data', 'partnerData'],
  ];
  const profile: Record<string, unknown> = {};
  for (const [wire, own] of names) if (fields[wire] !== undefined) profile[own] = fields[wire];
  return profile as Partial<UserProfile>;
}

/** POST /users body. */
export const createUserBody = z
  .object({ email: emailField(), ...profileFields, credits, session_id: sessionId })
  .transform(({ credits, session_id, ...fields }): NewUser => ({
    profile: profileOf(fields) as NewProfile,
    ...(credits !== undefined ? { credits } : {}),
    sessionId: session_id ?? null,
  }))
  .meta({ 'x-resource': 'user' });

/** PUT /users/:user_id body. */
export const updateUserBody = z
  .object({ email: emailField().optional(), ...profileFields, is_deleted: isDeleted, ...passwordFields })
  .superRefine(passwordRules, always)
  .transform(({ is_deleted, pass, password, pass_confirmation: _c, password_confirmation: _pc, ...fields }): UserChanges => ({
    profile: profileOf(fields),
    ...(is_deleted !== undefined ? { deleted: is_deleted } : {}),
    ...((pass ?? password) !== undefined ? { password: pass ?? password } : {}),
  }))
  .meta({ 'x-resource': 'user' });

const NO_PASSWORD = 'is not taken by update_by_email: set a password with PUT /users/:user_id';
/** update_by_email takes no password (it may create the user): sent, it is refused rather than taken. */
const refusedPassword = () =>
  z
    .never({ error: NO_PASSWORD })
    .optional()
    .meta({ description: 'not taken by this call: a password is set by PUT /users/:user_id, with its confirmation' });

/**
 * update_by_email body. The email is the path's (a body's email is not taken); credits
 * and session_id count only when the call creates the user (an unknown email).
 */
export const updateByEmailBody = z
  .object({
    ...profileFields,
    is_deleted: isDeleted,
    credits,
    session_id: sessionId,
    pass: refusedPassword(),
    password: refusedPassword(),
    pass_confirmation: refusedPassword(),
    password_confirmation: refusedPassword(),
  })
  .transform(({ is_deleted, credits, session_id, ...fields }): UserChangesByEmail => ({
    profile: profileOf(fields),
    ...(is_deleted !== undefined ? { deleted: is_deleted } : {}),
    ...(credits !== undefined ? { credits } : {}),
    sessionId: session_id ?? null,
  }))
  .meta({ 'x-resource': 'user' });

/**
 * The full purchase's user object, for its request schema: email, password and its
 * confirmation (under either name), first and last name; the same schemas and rules as the user calls'.
 * `notAnObject`: the message for a user that is not an object.
 */
export const purchaseUserFields = (notAnObject: string) =>
  z
    .object(
      {
        email: emailField(),
        ...passwordFields,
        first_name: profileFields.first_name,
        last_name: profileFields.last_name,
      },
      { error: notAnObject },
    )
    .superRefine(passwordRules, always)
    .transform(({ email, pass, password, first_name, last_name }): PurchaseUser => ({
      profile: profileOf({ email, first_name, last_name }) as NewProfile,
      ...((pass ?? password) !== undefined ? { password: pass ?? password } : {}),
    }));

export const userParams = z
  .object({ user_id: z.string().meta({ description: 'the user', example: 'u4Kd8' }) })
  .meta({ 'x-resource': 'user' });

export const byEmailParams = z
  .object({
    email: emailField().meta({ description: 'the email of the user to update, or to create when unknown', example: 'ann@example.com' }),
  })
  .meta({ 'x-resource': 'user' });

export const byEmailQuery = z
  .object({ overwrite_token: flag('must be true or false', 'true: a different token replaces the stored one (else 422)') })
  .meta({ 'x-resource': 'request' });

export class CreateUserBody extends requestDto(createUserBody) {}
export class UpdateUserBody extends requestDto(updateUserBody) {}
export class UpdateByEmailBody extends requestDto(updateByEmailBody) {}
export class UserParams extends requestDto(userParams) {}
export class ByEmailParams extends requestDto(byEmailParams) {}
export class ByEmailQuery extends requestDto(byEmailQuery) {}
