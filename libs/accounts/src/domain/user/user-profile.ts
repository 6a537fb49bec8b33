import type { ValidationIssue } from '@deals/kernel';
import type { UserProfile } from './user.events';

/** An address of at most 254 characters (RFC 5321's limit), no spaces or control characters, one @ and a dot after it. */
/** A local part, then a domain of two or more labels, none empty (`example.com.` names the same mailbox as `example.com`, so it is refused, not taken as another address). */
const EMAIL = /^(?=.{3,254}$)[^\s@\p{Cc}]+@[^\s@\p{Cc}.]+(?:\.[^\s@\p{Cc}.]+)+$/u;
const ZIP = /^\d{5}(-\d{4})?$/;
const NAME_MAX = 100;

/** The profile fields of a request, as the interface names them (`first_name`, `postal_code`...). */
export interface ProfileInput {
  email?: unknown;
  first_name?: unknown;
  last_name?: unknown;
  birthday?: unknown;
  postal_code?: unknown;
  source?: unknown;
  token?: unknown;
  partner_data?: unknown;
}

const FIELDS: Array<[keyof ProfileInput, keyof UserProfile]> = [
  ['email', 'email'],
  ['first_name', 'firstName'],
  ['last_name', 'lastName'],
  ['birthday', 'birthday'],
  ['postal_code', 'postalCode'],
  ['source', 'source'],
  ['token', 'token'],
  ['partner_data', 'partnerData'],
];

function isBirthday(text: string, now: Date): boolean {
  if (!/^\d{4}-\d\d-\d\d$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return (
    !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text) && date.getTime() <= now.getTime() && date.getUTCFullYear() >= 1900
  );
}

/**
 * Checks and converts the profile fields present in `input` (absent ones are left out); every
 * problem is one validation entry naming the field as the interface names it.
 */
/**
 * How deep `partner_data` may nest. Deeper JSON is no one's profile, and the log's readers walk
 * documents recursively: a few thousand levels overflowed the stack of a rebuild (session 11).
 */
export const PARTNER_DATA_MAX_DEPTH = 32;

/** Levels of objects and arrays in a parsed JSON value (1 for a flat object), counted without recursion. */
function nestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > PARTNER_DATA_MAX_DEPTH) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

export function readProfile(input: ProfileInput, now: Date): { profile: Partial<UserProfile>; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const profile: Partial<UserProfile> = {};
  const fail = (field: string, message: string) => issues.push({ type: 'invalid', resource: 'user', field, message });
  for (const [wire, own] of FIELDS) {
    const value = input[wire];
    if (value === undefined) continue;
    if (wire === 'partner_data') {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(wire, 'must be an object');
      else if (nestingDepth(value) > PARTNER_DATA_MAX_DEPTH) fail(wire, `must nest at most ${PARTNER_DATA_MAX_DEPTH} levels deep`);
      else profile.partnerData = value as Record<string, unknown>;
      continue;
    }
    if (value === null && wire !== 'email') {
      (profile as Record<string, unknown>)[own] = null;
      continue;
    }
    if (typeof value !== 'string') {
      fail(wire, 'must be text');
      continue;
    }
    const text = value.trim();
    if (wire === 'email' && !EMAIL.test(text)) fail(wire, 'is not an email address');
    else if ((wire === 'first_name' || wire === 'last_name') && text.length > NAME_MAX)
      fail(wire, `must be at most ${NAME_MAX} characters`);
    else if (wire === 'birthday' && !isBirthday(text, now)) fail(wire, 'must be a past date, YYYY-MM-DD');
    else if (wire === 'postal_code' && !ZIP.test(text)) fail(wire, 'must be a five-digit zip code');
    else if ((wire === 'source' || wire === 'token') && (text === '' || text.length > 200)) fail(wire, 'must be 1 to 200 characters');
    else (profile as Record<string, unknown>)[own] = text;
  }
  return { profile, issues };
}

/**
 * Reads a password under either of part 4.9's names (`pass`/`pass_confirmation` in the field list,
 * `password`/`password_confirmation` in the full purchase's user object): the value and the names
 * the caller used, so that errors name the fields it sent. Both names given with different values
 * is a conflict (`conflicts`): neither can be taken as the one meant.
 */
export function passwordInput(input: Record<string, unknown>) {
  const passName = input.pass !== undefined || input.password === undefined ? 'pass' : 'password';
  const confirmationName =
    input.pass_confirmation !== undefined
      ? 'pass_confirmation'
      : input.password_confirmation !== undefined
        ? 'password_confirmation'
        : `${passName}_confirmation`;
  const conflicts: ValidationIssue[] = [];
  for (const [short, long] of [
    ['pass', 'password'],
    ['pass_confirmation', 'password_confirmation'],
  ]) {
    if (input[short] !== undefined && input[long] !== undefined && input[short] !== input[long]) {
      conflicts.push({ type: 'invalid', resource: 'user', field: long, message: `differs from ${short}: give one of the two` });
    }
  }
  return {
    pass: input[passName],
    confirmation: input[confirmationName],
    names: { pass: passName, confirmation: confirmationName },
    conflicts,
  };
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** Characters as a reader counts them: a letter with its accents, an emoji with its joiners, is one. */
function characterCount(text: string): number {
  let count = 0;
  for (const _ of graphemes.segment(text)) count++;
  return count;
}

/**
 * A password is at least five characters (as a reader counts them, not UTF-16 units or code
 * points: an emoji, even one of several joined code points, is one)
 * and confirmed (part 4.9, 8). `names`: the fields the caller sent, for the errors.
 */
export function passwordIssues(
  pass: unknown,
  confirmation: unknown,
  names = { pass: 'pass', confirmation: 'pass_confirmation' },
): ValidationIssue[] {
  const issue = (field: string, message: string, type: ValidationIssue['type'] = 'invalid') => [{ type, message, resource: 'user', field }];
  if (typeof pass !== 'string') return issue(names.pass, 'must be text');
  if (characterCount(pass) < 5) return issue(names.pass, 'must be at least 5 characters');
  if (confirmation === undefined) return issue(names.confirmation, `is required with ${names.pass}`, 'missing_field');
  if (confirmation !== pass) return issue(names.confirmation, `does not match ${names.pass}`);
  return [];
}
