import { KEPT_ROW_BYTES } from '@deals/kernel';
import Database from 'better-sqlite3';
import { SqliteIdempotencyStore } from '@deals/adapters/idempotency-store/sqlite-idempotency-store.adapter';
import { idempotencyStoreContract } from '@deals/testing/contracts/idempotency-store.contract';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';

// One process serves a data folder (its lock): "another process" here is the next one on the same
// file, after the first stopped or died.
idempotencyStoreContract('sqlite file', async () => {
  const dir = tempDir('idempotency');
  const file = join(dir.path, 'idempotency.sqlite');
  const store = new SqliteIdempotencyStore(file);
  return {
    store,
    openAnother: async () => new SqliteIdempotencyStore(file),
    crash: (dying) => dying.close(),
    concurrentProcesses: false,
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});

describe("SqliteIdempotencyStore on a file of the version before the partners' counts", () => {
  it('counts its keys, under no partner, and goes on keeping answers', async () => {
    const dir = tempDir('idempotency-old');
    const file = join(dir.path, 'idempotency.sqlite');
    const old = new Database(file);
    old.exec(`CREATE TABLE idempotency_keys (
      key_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, started_at INTEGER NOT NULL, run_id TEXT NOT NULL, expires_at INTEGER NOT NULL,
      status INTEGER, content_type TEXT, body BLOB)`);
    old
      .prepare('INSERT INTO idempotency_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run('k', 'f', 1, 'r', Date.now() + 3_600_000, 200, 'x', Buffer.alloc(40));
    old.close();
    const store = new SqliteIdempotencyStore(file);
    try {
      store.warmUp();
      expect(store.keptBytes().get('')).toBe(KEPT_ROW_BYTES + 40);
      const now = Date.now();
      expect(await store.claim({ keyId: 'k2', partnerId: 'p', fingerprint: 'f', now, expiresAt: now + 1000, runId: 'r2' })).toMatchObject({
        kind: 'new',
      });
      expect(await store.claim({ keyId: 'k', partnerId: 'p', fingerprint: 'f', now, expiresAt: now + 1000, runId: 'r3' })).toMatchObject({
        kind: 'answered',
      });
    } finally {
      await store.close();
      dir.remove();
    }
  });
});
