/**
 * Write programs for the {@link SqliteWriteThread} spec, loaded by path in its worker: a pause that
 * keeps the worker inside a commit until released, an insert that tells its place in its transaction, and a write
 * that fails after writing.
 */
import type Database from 'better-sqlite3';

export function prepareWrites(db: Database.Database) {
  db.exec('CREATE TABLE IF NOT EXISTS rows (value TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO rows (value) VALUES (?)');
  const count = db.prepare('SELECT COUNT(*) FROM rows').pluck();
  return {
    /** Marks `gate` entered (1) and waits inside the commit until the test releases it (2), 10 s at most. */
    pause({ gate }: { gate: SharedArrayBuffer }) {
      const state = new Int32Array(gate);
      Atomics.store(state, 0, 1);
      Atomics.wait(state, 0, 1, 10_000);
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
