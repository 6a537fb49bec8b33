import type { UserProfile } from './user.events';

/**
 * The rules of a user's profile fields, as the request schemas (http/user.request.ts)
 * and the user writes apply them.
 */

/** An address of at most 254 characters (RFC 5321's limit), no spaces or control characters, one @ and a dot after it. */
/** A local part, then a domain of two or more labels, none empty (`example.com.` names the same mailbox as `example.com`, so it is refused, not taken as another address). */
export const EMAIL = /^(?=.{3,254}$)[^\s@\p{Cc}]+@[^\s@\p{Cc}.]+(?:\.[^\s@\p{Cc}.]+)+$/u;
export const ZIP = /^\d{5}(-\d{4})?$/;
export const NAME_MAX = 100;
/** The length of `source` and `token`, partner-given texts. */
export const PARTNER_TEXT_MAX = 200;
export const PASSWORD_MIN = 5;
export const BIRTHDAY_MESSAGE = 'must be a past date, YYYY-MM-DD';

/** A calendar date written YYYY-MM-DD, from 1900 on (whether it is past is {@link isPastDate}'s question). */
export function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d\d-\d\d$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text) && date.getUTCFullYear() >= 1900;
}

/** Whether a calendar date (YYYY-MM-DD) has begun at `now`, in UTC. */
export const isPastDate = (text: string, now: Date): boolean => new Date(`${text}T00:00:00Z`).getTime() <= now.getTime();

/**
 * How deep `partner_data` may nest. Deeper JSON is no one's profile, and the log's readers walk
 * documents recursively: a few thousand levels would overflow the stack of a rebuild.
 */
export const PARTNER_DATA_MAX_DEPTH = 32;

/** Levels of objects and arrays in a parsed JSON value (1 for a flat object), counted without recursion. */
export function nestingDepth(value: unknown): number {
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

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Characters as a reader counts them: a letter with its accents, an emoji with its joiners, is one
 * (a password's length, at least 5, is counted so, not in UTF-16 units or code points).
 */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of graphemes.segment(text)) count++;
  return count;
}

/** A new user's profile: the email and whatever else was given. */
export type NewProfile = Partial<UserProfile> & { email: string };

/** A user to register (POST /users). */
export interface NewUser {
  profile: NewProfile;
  /** Cents; the signup credit when absent. */
  credits?: number;
  sessionId: string | null;
}

/** Changes to a user (PUT /users/:user_id): its profile, a soft delete or restore, a new password. */
export interface UserChanges {
  profile: Partial<UserProfile>;
  deleted?: boolean;
  password?: string;
}

/** update_by_email's changes, and what a user it creates (an unknown email) starts with. */
export interface UserChangesByEmail extends UserChanges {
  credits?: number;
  sessionId: string | null;
}

/** A user as the full purchase's user object gives it: made with this profile and password unless its email names one. */
export interface PurchaseUser {
  profile: NewProfile;
  password?: string;
}
