/**
 * The personal-data keys' writes, run by their file's write thread (see {@link SqliteWriteThread})
 * in group transactions. Loaded by path in the worker: relative imports only.
 */
import type Database from 'better-sqlite3';

export const PERSONAL_KEYS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS personal_keys (user_id TEXT PRIMARY KEY, key BLOB NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS erased_users (user_id TEXT PRIMARY KEY, erased_at TEXT NOT NULL) WITHOUT ROWID;
`;

/** Every connection to the file zeroes what it deletes: an erased key's bytes must not stay in a free page. */
export const preparePersonalKeysFile = (db: Database.Database) => {
  db.pragma('secure_delete = ON');
  db.exec(PERSONAL_KEYS_SCHEMA);
};

export function prepareWrites(db: Database.Database) {
  preparePersonalKeysFile(db);
  const erased = db.prepare('SELECT 1 FROM erased_users WHERE user_id = ?').pluck();
  const keyOf = db.prepare('SELECT key FROM personal_keys WHERE user_id = ?').pluck();
  const insertKey = db.prepare('INSERT INTO personal_keys (user_id, key) VALUES (?, ?)');
  const deleteKey = db.prepare('DELETE FROM personal_keys WHERE user_id = ?');
  const markErased = db.prepare('INSERT INTO erased_users (user_id, erased_at) VALUES (?, ?) ON CONFLICT DO NOTHING');
  return {
    /** The user's key: the one kept, else `key` (kept from now on); null when the user was erased. */
    keyFor({ userId, key }: { userId: string; key: Uint8Array }): Uint8Array | null {
      if (erased.get(userId)) return null;
      const kept = keyOf.get(userId) as Uint8Array | undefined;
      if (kept) return kept;
      insertKey.run(userId, key);
      return key;
    },

    erase({ userId, erasedAt }: { userId: string; erasedAt: string }): null {
      markErased.run(userId, erasedAt);
      deleteKey.run(userId);
      return null;
    },
  };
}
