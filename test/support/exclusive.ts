import { underFolderLock } from '@deals/runtime';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A lock that suites in other jest workers wait for: the suites that start several processes on
 * the machine's PostgreSQL each open up to ~70 connections, and two at once would pass the server's
 * 100 ("sorry, too many clients already"). Held from `beforeAll` until the function it resolves to
 * is called (`afterAll`); the data folder's own lock (`underFolderLock`), which takes over a lock
 * whose holder died.
 */
export function exclusive(name: string, waitMs = 900_000): Promise<() => void> {
  return new Promise((held, failed) => {
    underFolderLock(join(tmpdir(), `deals-tests-${name}.lock`), () => new Promise<void>((release) => held(release)), { waitMs }).catch(
      failed,
    );
  });
}
