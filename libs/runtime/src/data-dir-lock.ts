import { closeSync, openSync, readFileSync, readlinkSync, rmSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { processAlive } from '@deals/adapters';

/**
 * The one process that serves a data folder as the embedded API. It recovers interrupted
 * purchases at start and runs the release jobs as if alone (the SQLite log could take a second
 * API, but the second's start-up recovery would settle the first's purchases in the middle of
 * their charge). The lock is a file naming its process; one whose process is gone (a kill -9), or
 * whose pid another program runs now (reused after a restart of the machine or the container), is
 * taken over. CLI commands beside the API do not take it.
 */
export class DataDirLock {
  private constructor(private readonly file: string) {}

  static claim(dataDir: string): DataDirLock {
    const file = join(dataDir, 'api.pid');
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(file, 'wx', 0o600);
        writeSync(fd, `${process.pid}\n`);
        closeSync(fd);
        return new DataDirLock(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = Number.parseInt(readFileSync(file, 'utf8'), 10);
        if (Number.isSafeInteger(holder) && holder > 0 && processAlive(holder) && runsNode(holder)) {
          throw new Error(
            `another API process (pid ${holder}) serves ${dataDir}: one embedded API per data folder (remove ${file} if that process is not this service)`,
            { cause: error },
          );
        }
        rmSync(file, { force: true }); // left by a process that is gone: taken over
      }
    }
    throw new Error(`${file}: could not be claimed`);
  }

  release(): void {
    try {
      if (Number.parseInt(readFileSync(this.file, 'utf8'), 10) === process.pid) rmSync(this.file, { force: true });
    } catch {
      // gone already
    }
  }
}

/**
 * Whether process `pid` runs Node.js, as far as /proc tells: yes where it cannot be told (no /proc,
 * another user's process), so that only a pid plainly reused by another program is taken over.
 */
function runsNode(pid: number): boolean {
  try {
    return basename(readlinkSync(`/proc/${pid}/exe`)).startsWith('node');
  } catch {
    return true;
  }
}
