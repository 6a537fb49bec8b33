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

/** Characters of a key shown to tell it apart (`dk_` and 9 more): too few to help a guess. */
export const KEY_PREFIX_LENGTH = 12;

export const newApiKey = (random: (bytes: number) => Buffer = randomBytes) => `dk_${random(24).toString('base64url')}`;
export const newPassword = (random: (bytes: number) => Buffer = randomBytes) => random(24).toString('base64url');
export const keyPrefix = (apiKey: string) => apiKey.slice(0, KEY_PREFIX_LENGTH);

export function issueCredentials(name: string, random: (bytes: number) => Buffer = randomBytes): IssuedCredentials {
  const slug =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 24) || 'partner';
  return { apiKey: newApiKey(random), username: `${slug}-${random(3).toString('hex')}`, password: newPassword(random) };
}
