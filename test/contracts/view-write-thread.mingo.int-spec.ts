import { ViewDocument } from '@deals/kernel';
import Database from 'better-sqlite3';
import type { Worker } from 'node:worker_threads';
import { DiskGeneration } from '@deals/adapters/view-store/mingo/disk-generation';
import { ViewWriteNotAnswered, ViewWriteThread } from '@deals/adapters/view-store/mingo/view-write-thread';
import { tempDir } from '../support/temp-dir';

/**
 * The embedded view store's write thread may be inside a SQLite statement whenever it has a request:
 * it is never stopped from outside then (a statement failing in a thread being terminated aborts the
 * whole process), only asked to leave, which it does between requests.
 */
describe('embedded view store: its write thread', () => {
  const dir = tempDir('view-write-thread');
  afterAll(() => dir.remove());
  const pos = (n: number) => String(n).padStart(20, '0');
  const doc = (id: string, n: number, userId: string) => ({ _id: id, _pos: pos(n), userId }) as ViewDocument;
  const workerOf = (thread: ViewWriteThread) => (thread as unknown as { worker: Worker | null }).worker;

  function generationOn(name: string, thread: ViewWriteThread) {
    const file = `${dir.path}/${name}.sqlite`;
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    return { file, generation: new DiskGeneration('purchases', 'g', db, ['userId'], false, 5, thread) };
  }

  it('fails a write not answered in time, lets its thread end after its statement, and writes later ones on a new thread', async () => {
    const thread = new ViewWriteThread();
    const { file, generation } = generationOn('not-answered', thread);
    try {
      // The first write starts the thread under the usual limit (a busy machine takes a while to start one).
      generation.commit([doc('a', 1, 'u')], pos(1));
      generation.write();
      const first = workerOf(thread)!;
      (thread as unknown as { waitLimitMs: number }).waitLimitMs = 100;
      const exited = new Promise((resolve) => first.once('exit', resolve));
      // Another connection holds the file's write lock: the thread's write waits for it past the
      // wait limit, then fails there (its busy timeout) while no one waits for it any more.
      const other = new Database(file);
      other.exec('BEGIN IMMEDIATE');
      generation.commit([doc('b', 2, 'v')], pos(2));
      expect(() => generation.write()).toThrow(ViewWriteNotAnswered);
      // Nothing more is sent while that thread may still be inside its statement (no second
      // connection of this process writes the file meanwhile): the write fails, its documents pending.
      expect(() => generation.write()).toThrow();
      await exited;
      other.exec('ROLLBACK');
      other.close();
      // The next write starts another thread, under the usual limit again.
      (thread as unknown as { waitLimitMs: number }).waitLimitMs = 15_000;
      generation.write();
      expect(workerOf(thread)).not.toBeNull();
      expect(workerOf(thread)).not.toBe(first);
      expect(generation.saveFailing).toBeNull();
      const onFile = new Database(file, { readonly: true });
      try {
        expect(onFile.prepare('SELECT id FROM docs ORDER BY id').pluck().all()).toEqual(['a', 'b']);
        expect(onFile.prepare("SELECT value FROM meta WHERE key = 'checkpoint'").pluck().get()).toBe(pos(2));
        expect(onFile.prepare('SELECT id FROM keys WHERE field = ? AND value = ?').pluck().all('userId', 'v')).toEqual(['b']);
      } finally {
        onFile.close();
      }
    } finally {
      generation.close();
    }
  });

  it('ends a thread that holds no file by asking it to leave, never by terminating it', async () => {
    const thread = new ViewWriteThread();
    const { generation } = generationOn('idle', thread);
    generation.commit([doc('a', 1, 'u')], pos(1));
    generation.write();
    const first = workerOf(thread)!;
    const exitCode = new Promise<number>((resolve) => first.once('exit', resolve));
    generation.close();
    // Ended by itself (0), not terminated (1).
    expect(await exitCode).toBe(0);
    expect(workerOf(thread)).toBeNull();
  });
});
