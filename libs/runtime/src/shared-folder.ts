import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** How long a lock may be held before its holder is taken for gone, when its process cannot be asked (another host). */
const STALE_MS = 10 * 60_000;
const POLL_MS = 50;

/**
 * Writes `data` to `file` whole: into a private temporary file beside it, synced, then renamed into
 * place, so that a reader sees the old file or the new one, never a part of it.
 */
export function writeWhole(file: string, data: string | Buffer, mode = 0o600): void {
  const dir = dirname(file);
  const temporary = join(dir, `.${basename(file)}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temporary, 'wx', mode);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  syncDirectory(dir);
}

export function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Runs `body` while holding `lockFile` (created exclusively, naming its process), so that processes
 * sharing a data folder make what `body` makes one at a time: the first makes it, the others wait,
 * then find it made. A lock whose process is gone (a kill -9 while making) is taken over; so is one
 * older than ten minutes from another host. Waits at most `waitMs` for the lock.
 */
export async function underFolderLock<T>(lockFile: string, body: () => Promise<T>, { waitMs = 120_000 } = {}): Promise<T> {
  mkdirSync(dirname(lockFile), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + waitMs;
  while (!tryLock(lockFile)) {
    if (Date.now() > deadline) throw new Error(`${lockFile}: still held after ${waitMs} ms (${holderOf(lockFile) ?? 'no holder named'})`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    return await body();
  } finally {
    rmSync(lockFile, { force: true });
  }
}

const SELF = () => `${process.pid} ${hostname()}`;

function tryLock(lockFile: string): boolean {
  try {
    const fd = openSync(lockFile, 'wx', 0o600);
    try {
      writeSync(fd, `${SELF()}\n`);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (isStale(lockFile)) {
    // Renamed aside, then checked again: another process may have taken the stale lock over and
    // made its own since this one looked; that one is put back.
    const aside = `${lockFile}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      renameSync(lockFile, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return false;
    }
    if (!isStale(aside)) {
      try {
        linkSync(aside, lockFile);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    unlinkSync(aside);
  }
  return false;
}

function holderOf(lockFile: string): string | null {
  try {
    return readFileSync(lockFile, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function isStale(lockFile: string): boolean {
  let age: number;
  try {
    age = Date.now() - statSync(lockFile).mtimeMs;
  } catch {
    return false; // released meanwhile
  }
  const [pid, host] = (holderOf(lockFile) ?? '').split(' ');
  const holder = Number.parseInt(pid ?? '', 10);
  // A holder on this host is asked; an empty file is a holder between its create and its write.
  if (host === hostname() && Number.isSafeInteger(holder) && holder > 0) return !isAlive(holder);
  return age > STALE_MS;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
