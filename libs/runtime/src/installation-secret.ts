import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { syncDirectory } from './shared-folder';

const SECRET_BYTES = 32;
const MIN_SECRET_BYTES = 16;
const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

/**
 * A secret of this installation, kept in `<dataDir>/secrets/<name>.key`: read if present, else
 * made on first use (32 random bytes, mode 0600). An operator may place their own file there
 * (at least 16 random bytes). Losing it changes everything derived from it (card fingerprints stop
 * matching earlier ones), so it is backed up with the data, and ideally kept apart from it.
 */
export function installationSecret(dataDir: string, name: string): Buffer {
  if (!NAME.test(name)) throw new Error(`invalid secret name ${JSON.stringify(name)}`);
  const dir = join(dataDir, 'secrets');
  const file = join(dir, `${name}.key`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let secret = readIfPresent(file);
  if (secret === null) {
    create(dir, file);
    secret = readFileSync(file);
  }
  if (secret.length < MIN_SECRET_BYTES) {
    throw new Error(`${file} holds ${secret.length} bytes; a secret needs at least ${MIN_SECRET_BYTES}`);
  }
  return secret;
}

function readIfPresent(file: string): Buffer | null {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Writes the whole secret to a private temporary file, syncs it, then links it into place: the link
 * fails if another process got there first, so two processes starting together agree on one
 * secret and neither ever reads a half-written file.
 */
function create(dir: string, file: string): void {
  const temporary = join(dir, `.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    fchmodSync(fd, 0o600); // the umask may only have narrowed it, but be explicit
    writeSync(fd, randomBytes(SECRET_BYTES));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  syncDirectory(dir);
}
