import { createHash } from 'node:crypto';

/**
 * The id of a record that exists at most once per natural key (a user's saved deal, a user's
 * subscription to a region): a digest of the key, so the record's stream is the key's, and two
 * calls for the same key meet on one stream (one append wins; the other finds it). 20 hex digits.
 */
export const naturalId = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 20);
