import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { underFolderLock, writeWhole } from './shared-folder';

describe('writeWhole and underFolderLock', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'shared-folder-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a file whole with its mode, leaving no temporary file', () => {
    writeWhole(join(dir, 'a.json'), '{"a":1}\n', 0o600);
    writeWhole(join(dir, 'a.json'), '{"a":2}\n', 0o600);
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('{"a":2}\n');
    expect(statSync(join(dir, 'a.json')).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it('runs one body at a time, the others waiting for it, and removes the lock after', async () => {
    const lock = join(dir, 'sub', '.made.lock');
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3].map((n) =>
        underFolderLock(lock, async () => {
          most = Math.max(most, ++inside);
          await new Promise((resolve) => setTimeout(resolve, 30));
          order.push(n);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order.sort()).toEqual([0, 1, 2, 3]);
    expect(existsSync(lock)).toBe(false);
  });

  it('releases the lock when the body throws', async () => {
    const lock = join(dir, '.made.lock');
    await expect(underFolderLock(lock, async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await underFolderLock(lock, async () => 'next')).toBe('next');
  });

  it('takes over a lock whose process is gone, and waits for one whose process lives', async () => {
    const lock = join(dir, '.made.lock');
    writeFileSync(lock, `${2 ** 22 + 1} ${hostname()}\n`); // above Linux's pid_max: no such process
    expect(await underFolderLock(lock, async () => 'taken over')).toBe('taken over');
    writeFileSync(lock, `${process.pid} ${hostname()}\n`);
    await expect(underFolderLock(lock, async () => 'never', { waitMs: 200 })).rejects.toThrow(/still held after 200 ms/);
    expect(readdirSync(dir)).toEqual(['.made.lock']);
  });
});
