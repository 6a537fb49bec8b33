import { foldedIdentity, type ValidationIssue } from '@deals/kernel';

/** How long an invitation link works. */
export const INVITE_LIFETIME_MS = 72 * 3_600_000;
/** A session ends this long after its sign-in, however busy. */
export const SESSION_LIFETIME_MS = 12 * 3_600_000;
/** A session unused this long has ended. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** A session's idle time restarts (an event) when it is used this long after it last did: the idle end is exact to this. */
export const SESSION_REFRESH_MS = 5 * 60_000;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 200;

/** The longest email address (RFC 5321's path, less its brackets). */
export const MAX_EMAIL_LENGTH = 254;

const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;

/** An email as the site keys it: trimmed, in NFC and case-folded (`foldedIdentity`); for ASCII, its lower case. */
export const normalEmail = (email: string) => foldedIdentity(email.trim());

/**
 * The keys an email may have had when the site keyed addresses by their lower case alone: that of
 * the spelling given, composed and decomposed (a person invited as `café` with either may sign in
 * with the other). Members invited then are found under these; none differs for ASCII.
 */
export const legacyEmailKeys = (email: string): string[] => {
  const lower = email.trim().toLowerCase();
  return [...new Set([lower, lower.normalize('NFC'), lower.normalize('NFD')])];
};

export function emailIssues(email: string): ValidationIssue[] {
  if (!email.trim()) return [{ type: 'missing_field', resource: 'member', field: 'email', message: 'is required' }];
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL.test(email.trim()))
    return [{ type: 'invalid', resource: 'member', field: 'email', message: 'is not an email address' }];
  return [];
}

/**
 * What is wrong with a new password: its length, a confirmation that differs, or that it is or
 * holds the email or its name part (the first guess of anyone who knows the address).
 */
export function passwordIssues(password: string, confirmation: string, email: string): ValidationIssue[] {
  const issue = (message: string, field = 'password'): ValidationIssue => ({ type: 'invalid', resource: 'member', field, message });
  if (password.length < MIN_PASSWORD_LENGTH) return [issue(`must be at least ${MIN_PASSWORD_LENGTH} characters`)];
  if (password.length > MAX_PASSWORD_LENGTH) return [issue(`must be at most ${MAX_PASSWORD_LENGTH} characters`)];
  const folded = foldedIdentity(password);
  const address = normalEmail(email);
  const name = address.split('@')[0];
  if (folded.includes(address) || (name.length >= 3 && folded.includes(name)))
    return [issue('must not contain your email address or its name')];
  if (new Set(password).size < 4) return [issue('must not repeat so few characters')];
  if (password !== confirmation) return [issue('does not match the password', 'password_confirmation')];
  return [];
}
