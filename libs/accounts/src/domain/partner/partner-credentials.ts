import { createHash, randomBytes } from 'node:crypto';

export interface IssuedCredentials {
  apiKey: string;
  username: string;
  password: string;
}

/**
 * A fast hash is right here and a slow one would be wrong: the secrets are 192 random bits made by
 * the service (nothing to brute-force), and every request is checked against them.
 */
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Characters of a key shown to tell it apart (`dk_` and 9 more, `dk_test_` and 4 more): too few to help a guess. */
export const KEY_PREFIX_LENGTH = 12;

/** What a sandbox's keys start with, so that a person tells a test key from a live one at a glance. */
export const TEST_KEY_START = 'dk_test_';

export const newApiKey = (random: (bytes: number) => Buffer = randomBytes, test = false) =>
  `${test ? TEST_KEY_START : 'dk_'}${random(24).toString('base64url')}`;
export const newPassword = (random: (bytes: number) => Buffer = randomBytes) => random(24).toString('base64url');
export const keyPrefix = (apiKey: string) => apiKey.slice(0, KEY_PREFIX_LENGTH);

/** A partner's first credentials; a sandbox's (`test`) have a test key and a username saying `test`. */
export function issueCredentials(name: string, random: (bytes: number) => Buffer = randomBytes, test = false): IssuedCredentials {
  const slug =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 24) || 'partner';
  return {
    apiKey: newApiKey(random, test),
    username: `${slug}${test ? '-test' : ''}-${random(3).toString('hex')}`,
    password: newPassword(random),
  };
}

/** A v3 password of a partner, by its hash; null `expiresAt`: the current one. */
export interface PartnerPassword {
  hash: string;
  expiresAt: string | null;
}

/** Ended passwords kept, so that a client still sending one is told it expired, not that it is wrong. */
const ENDED_PASSWORDS_KEPT = 5;
/** Rotations within one grace period that keep their passwords working (each request checks them all). */
const IN_GRACE_PASSWORDS_KEPT = 10;
/** The most passwords a partner holds: the current one, those in their grace period, the ended ones kept. */
export const PASSWORDS_HELD = 1 + IN_GRACE_PASSWORDS_KEPT + ENDED_PASSWORDS_KEPT;

/**
 * The passwords after a rotation to `passwordHash` at `rotatedAt`: the new one current; the replaced
 * ones end at `previousExpiresAt`, or earlier if they already had an end, those in their grace period
 * kept, and the last few ended ones too.
 */
export function passwordsAfterRotation(
  passwords: readonly PartnerPassword[],
  { passwordHash, rotatedAt, previousExpiresAt }: { passwordHash: string; rotatedAt: string; previousExpiresAt: string },
): PartnerPassword[] {
  const replaced = passwords.map((p) => ({
    hash: p.hash,
    expiresAt: p.expiresAt !== null && p.expiresAt < previousExpiresAt ? p.expiresAt : previousExpiresAt,
  }));
  const ended = replaced.filter((p) => p.expiresAt <= rotatedAt).slice(0, ENDED_PASSWORDS_KEPT);
  const inGrace = replaced.filter((p) => p.expiresAt > rotatedAt).slice(0, IN_GRACE_PASSWORDS_KEPT);
  return [{ hash: passwordHash, expiresAt: null }, ...inGrace, ...ended];
}
