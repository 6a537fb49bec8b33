/**
 * Write programs for the {@link SqliteWriteThread} spec, loaded by path in its worker: a pause that
 * keeps the worker inside a commit, an insert that tells its place in its transaction, and a write
 * that fails after writing.
 */
import type Database from 'better-sqlite3';

export function prepareWrites(db: Database.Database) {
  db.exec('CREATE TABLE IF NOT EXISTS rows (value TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO rows (value) VALUES (?)');
  const count = db.prepare('SELECT COUNT(*) FROM rows').pluck();
  return {
    pause({ ms }: { ms: number }) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
      return 'paused';
    },
    /** Returns how many inserts its transaction has made, itself included (`scratch` lives for one transaction). */
    insert({ value }: { value: string }, scratch: Map<string, unknown>) {
      insert.run(value);
      const made = ((scratch.get('inserts') as number | undefined) ?? 0) + 1;
      scratch.set('inserts', made);
      return made;
    },
    failAfterWriting() {
      insert.run('undone');
      throw new Error('refused after writing');
    },
    rows: () => count.get(),
  };
}
