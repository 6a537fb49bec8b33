import { join } from 'node:path';
import { tempDir } from '../../../../test/support/temp-dir';
import { SqliteWriteFailed, SqliteWriteThread } from './write-thread';

const PROGRAMS = join(__dirname, '../../../../test/support/write-programs.fixture.ts');
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs the fixture's `pause` and resolves once the worker is inside its commit (it may take a few
 * hundred ms to start); `release` lets the commit end.
 */
async function pauseInsideCommit(thread: SqliteWriteThread): Promise<{ paused: Promise<unknown>; release: () => void }> {
  const gate = new SharedArrayBuffer(4);
  const state = new Int32Array(gate);
  const paused = thread.run('pause', { gate });
  while (Atomics.load(state, 0) !== 1) await new Promise((resolve) => setTimeout(resolve, 5));
  return {
    paused,
    release: () => {
      Atomics.store(state, 0, 2);
      Atomics.notify(state, 0);
    },
  };
}

async function withTempDir(label: string, run: (dir: string) => Promise<void>): Promise<void> {
  const dir = tempDir(label);
  try {
    await run(dir.path);
  } finally {
    dir.remove();
  }
}

describe('SqliteWriteThread', () => {
  const open = (dir: string) =>
    new SqliteWriteThread({ file: join(dir, 'rows.sqlite'), durability: 'full', programs: PROGRAMS, walLimitBytes: 0 });

  it('commits the batches sent while a commit runs in one transaction, and answers each request in order', async () => {
    await withTempDir('write-thread', async (dir) => {
      const thread = open(dir);
      try {
        const { paused, release } = await pauseInsideCommit(thread);
        const inserts: Array<Promise<unknown>> = [];
        for (const value of ['a', 'b', 'c']) {
          inserts.push(thread.run('insert', { value }));
          await nextTurn(); // each in a batch of its own
        }
        release();
        expect(await paused).toBe('paused');
        // One transaction: the inserts count 1, 2, 3 (a commit per batch would answer 1, 1, 1).
        expect(await Promise.all(inserts)).toEqual([1, 2, 3]);
        expect(await thread.run('rows', {})).toBe(3);
      } finally {
        await thread.close();
      }
    });
  });

  it('sends what the running code asks as one batch before the loop turns; what is asked after goes in the next', async () => {
    await withTempDir('write-thread', async (dir) => {
      const thread = open(dir);
      const sent = () => (thread as unknown as { inFlight: unknown[][] }).inFlight.map((batch) => batch.length);
      try {
        const first = [thread.run('insert', { value: 'a' }), thread.run('insert', { value: 'b' })];
        expect(sent()).toEqual([]);
        await Promise.resolve(); // the microtasks of this run of code, and no turn of the loop
        expect(sent()).toEqual([2]);
        const next = thread.run('insert', { value: 'c' });
        await Promise.resolve();
        expect(sent()).toEqual([2, 1]);
        expect(await Promise.all([...first, next])).toEqual([1, 2, 3]);
      } finally {
        await thread.close();
      }
    });
  });

  it('undoes only the failing request of a joined transaction; the other batches commit', async () => {
    await withTempDir('write-thread', async (dir) => {
      const thread = open(dir);
      try {
        const { paused, release } = await pauseInsideCommit(thread);
        const before = thread.run('insert', { value: 'before' });
        await nextTurn();
        const failing = thread.run('failAfterWriting', {});
        const failed = failing.catch((error: unknown) => error);
        await nextTurn();
        const after = thread.run('insert', { value: 'after' });
        await nextTurn();
        release();
        await paused;
        expect(await before).toBe(1);
        const error = await failed;
        expect(error).toBeInstanceOf(SqliteWriteFailed);
        expect((error as Error).message).toBe('refused after writing');
        expect(await after).toBe(2);
        expect(await thread.run('rows', {})).toBe(2);
      } finally {
        await thread.close();
      }
    });
  });
});
