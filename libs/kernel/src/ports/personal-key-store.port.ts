/**
 * Where each subject's personal-data key is kept, beside the log in the same store (a file of the
 * data folder, a table of the log's database). A subject is a user, by its id, or another person
 * the log speaks of (a reseller sale's buyer, a partner site member) by a prefixed name: the
 * `userId` of these methods.
 *
 * Promises: a key made is durable before it is given; a user has one key for good (two makers at
 * once get the same); an erased user's key is deleted and a mark of its erasure kept instead, so no
 * key is ever made for it again. Leaves out: what the keys encrypt, and caching them.
 */
export abstract class PersonalKeyStore {
  /** The user's key, made on first use (32 random bytes); null when the user's data was erased. */
  abstract keyFor(userId: string): Promise<Buffer | null>;

  /** The user's key if one was made and not erased; `erased` tells those two apart. */
  abstract keyOf(userId: string): Promise<{ key: Buffer | null; erased: boolean }>;

  /** Which of these users still have a key kept (an erasure interrupted before its deletion, or keys restored from before it). */
  abstract keptOf(userIds: readonly string[]): Promise<string[]>;

  /** Deletes the user's key for good and marks it erased (an erasure again, or of a user with no key yet, marks it too). */
  abstract erase(userId: string, erasedAt: Date): Promise<void>;

  abstract close(): Promise<void>;
}
