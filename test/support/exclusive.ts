import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A lock that suites in other jest workers wait for: the suites that start several processes on
 * the machine's PostgreSQL each open up to ~70 connections, and two at once would pass the server's
 * 100 ("sorry, too many clients already"). Held from `beforeAll` to `afterAll`; a lock whose holder
 * died is taken over.
 */
export async function exclusive(name: string, waitMs = 900_000): Promise<() => void> {
  const file = join(tmpdir(), `deals-tests-${name}.lock`);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(file, 'utf8') === String(process.pid)) unlinkSync(file);
        } catch {
          // gone already
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!holderAlive(file)) {
      try {
        unlinkSync(file);
      } catch {
        // another waiter took it over first
      }
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${file}: still held after ${waitMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function holderAlive(file: string): boolean {
  try {
    const pid = Number(readFileSync(file, 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return true; // being written: wait
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH' && (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
