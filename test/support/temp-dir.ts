import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh folder under the OS temp dir, and its removal. */
export function tempDir(label: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), `deals-${label}-`));
  // Retried: a SQLite file a closed store's connection is still letting go of (its -wal, -shm) can
  // reappear while the folder is removed (ENOTEMPTY).
  return { path, remove: () => rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }) };
}
